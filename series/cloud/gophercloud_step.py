"""A scenario step: volumes attached by gophercloud (its series applied)
to the run's own servers, so that the scenario's checks judge in the
guests what gophercloud's requests did. The acceptance tests
(gophercloud_acceptance) judge the API's and Cinder's records of their
own servers; here the same client's attachments are held to the libvirt
XML, QEMU, the guest kernel, the write below it and the RBD image.

The client is gophercloud-attach/, a Go program of this repository built
against the series' work tree by a `replace` directive, as a Go user of
the series builds: it attaches at compute 2.105 and reads each attachment
back with a GET. One multiattach volume goes ro to a server on each host;
a control volume goes without a mode to one of them, and must be rw.
"""

import json
import os
from pathlib import Path

from series.cloud import attachment_checks
from series.cloud.client import check
from series.cloud import hosts
from series.cloud import layout
from series import config
from series import go_module
from series import process
from series import queue

PROGRAM = Path(__file__).parent / 'gophercloud-attach'


def build():
    """go vet and go build of the program against the gophercloud work
    tree (applied first if there is none); the binary.
    """
    queue.ensure_tree(config.get_project('gophercloud'))
    binary = go_module.cache_directory() / 'bin' / 'gophercloud-attach'
    go_module.go('vet', '.', cwd=PROGRAM)
    go_module.go('build', '-o', binary, '.', cwd=PROGRAM)
    return binary


def environment():
    """The OS_* variables of the member who owns the run's servers; every
    other OS_* variable of this process emptied.
    """
    inherited = {name: '' for name in os.environ if name.startswith('OS_')}
    return {**inherited,
            'OS_AUTH_URL': layout.url('keystone', '/v3'),
            'OS_USERNAME': layout.MEMBER,
            'OS_PASSWORD': layout.password(),
            'OS_PROJECT_NAME': layout.PROJECT,
            'OS_DOMAIN_NAME': 'Default',
            'OS_REGION_NAME': layout.REGION}


def argument(server_id, volume_id, mode):
    return ':'.join(filter(None, (server_id, volume_id, mode)))


def attach(requests):
    """Run the program on `requests`, [(server, volume, mode or None)];
    the lines it printed, each a dict.
    """
    proc = process.run([build(), *(argument(*request)
                                   for request in requests)],
                       env=environment(), check=False)
    printed, errors = [], []
    for line in proc.stdout.splitlines():
        try:
            printed.append(json.loads(line))
        except json.JSONDecodeError:
            errors.append(line)
    check(proc.returncode == 0,
          f'gophercloud-attach exited {proc.returncode} after '
          f'{len(printed)} attachments: {" ".join(errors)}')
    return printed


def reply_problems(requests, replies):
    """What the program's lines say against the requests: one line per
    request, in order, each listed by the GET in the mode asked for, rw
    where none was. (The program prints a line only for an attach the
    API accepted with the 202 of 2.105; it exits non-zero on any other
    answer.)
    """
    if len(replies) != len(requests):
        return [f'{len(replies)} attachments printed for {len(requests)} '
                'requests']
    problems = []
    for (server_id, volume_id, mode), reply in zip(requests, replies):
        name = f'{volume_id} on {server_id}'
        if (reply['server'], reply['volume']) != (server_id, volume_id):
            problems.append(f'{name}: printed as {reply["volume"]} on '
                            f'{reply["server"]}')
        if reply['attach_mode'] != (mode or 'rw'):
            problems.append(f'{name}: the GET lists attach_mode '
                            f'{reply["attach_mode"]}, not {mode or "rw"}')
    return problems


def one_server_per_host(tracker):
    """A server of the run on each host, in the order of hosts.HOSTS."""
    placed = tracker.placements()
    chosen = [next((server for server in tracker.servers
                    if placed.get(server) == host.name), None)
              for host in hosts.HOSTS]
    check(None not in chosen, f'the run has no server on each host: '
          f'{placed}')
    return chosen


def detach_all(tracker, attached):
    """Detach each of `attached`, [(server, volume)], also when one
    fails; the failures.
    """
    problems = []
    for server_id, volume_id in attached:
        try:
            tracker.detach(server_id, volume_id)
        except Exception as error:
            problems.append(f'{volume_id} from {server_id}: {error}')
    return problems


def gophercloud_attach(tracker):
    """The step; its detail. Whatever fails, the attachments Nova lists
    are in the ledger and are detached before the step ends.
    """
    cloud = tracker.cloud
    first, second = one_server_per_host(tracker)
    shared = tracker.new_volume('gophercloud-ro')
    control = tracker.new_volume('gophercloud-rw')
    regions = {volume: tracker.slot_region(volume)
               for volume in (shared, control)}
    requests = [(first, shared, 'ro'), (second, shared, 'ro'),
                (first, control, None)]
    attached = []
    try:
        try:
            replies = attach(requests)
        finally:
            for server_id, volume_id, mode in requests:
                if cloud.attached(server_id, volume_id):
                    cloud.wait_attached(server_id, volume_id)
                    tracker.expect(server_id, volume_id, mode or 'rw',
                                   regions[volume_id])
                    attached.append((server_id, volume_id))
        problems = reply_problems(requests, replies)
        check(not problems, '; '.join(problems))
        views = attachment_checks.check_views(tracker, [first, second])
    except BaseException:
        for problem in detach_all(tracker, attached):
            process.say(f'scenario: gophercloud-attach: not detached: '
                        f'{problem}')
        raise
    problems = detach_all(tracker, attached)
    check(not problems, 'not detached: ' + '; '.join(problems))
    listed = ', '.join(str(reply['attach_mode']) for reply in replies)
    return (f'gophercloud attached one volume ro to {first} and {second}, '
            f'a control volume without a mode to {first}: the GET lists '
            f'{listed}; {views}; {len(attached)} detached')
