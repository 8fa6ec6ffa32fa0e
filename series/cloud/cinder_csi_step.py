"""A scenario step: Kubernetes' cinder-csi plugin (cloud-provider-openstack
with its series) publishes volumes to the run's own servers, and the
scenario's checks judge in the guests what its publishes did.

The plugin's controller service runs as a process of the cloud (its
command, cmd/cinder-csi-plugin, built from the series' work tree against
gophercloud's), with a cloud.conf of the member who owns the servers. It
is driven over its gRPC socket by cinder-csi-publish/, a Go client of
this repository that makes the calls Kubernetes' external-attacher makes
(ControllerPublishVolume, ControllerUnpublishVolume, with the volume
capabilities a ReadOnlyMany or ReadWriteOnce claim gives) and prints each
answer. The node ids are the servers' ids, which the plugin's node
service reports from the metadata service; no node service, kubelet or
Kubernetes API server runs here.
"""

import dataclasses
import json
from pathlib import Path

from series.cloud import attachment_checks
from series.cloud.client import check
from series.cloud import gophercloud_step
from series.cloud import layout
from series.cloud import rest
from series.cloud import services
from series import config
from series import go_module
from series import go_tests
from series import process
from series import queue

PROGRAM = Path(__file__).parent / 'cinder-csi-publish'
PROJECT = 'cloud-provider-openstack'
SERVICE = 'cinder-csi-controller'
SOCKET_SECONDS = 60
READER = 'MULTI_NODE_READER_ONLY'
WRITER = 'SINGLE_NODE_WRITER'


@dataclasses.dataclass
class Call:
    """One call of the client and the gRPC code it must get (for
    `validate`, whether the capability must be confirmed).
    """
    arguments: tuple
    code: str = 'OK'
    confirmed: bool = None

    def argument(self):
        return ':'.join(self.arguments)


def build():
    """The plugin, built from cloud-provider-openstack's work tree in its
    workspace with gophercloud's (both applied first if missing), and the
    client, vetted and built; their binaries.
    """
    project = config.get_project(PROJECT)
    tree = go_tests.workspace(project, queue.ensure_tree(project))
    binaries = go_module.cache_directory() / 'bin'
    plugin = binaries / 'cinder-csi-plugin'
    go_module.go('build', '-o', plugin, './cmd/cinder-csi-plugin', cwd=tree)
    client = binaries / 'cinder-csi-publish'
    go_module.go('vet', '.', cwd=PROGRAM)
    go_module.go('build', '-o', client, '.', cwd=PROGRAM)
    return plugin, client


def cloud_conf():
    """The plugin's cloud.conf: the member who owns the run's servers."""
    return (f'[Global]\nauth-url = {layout.url("keystone", "/v3")}\n'
            f'username = {layout.MEMBER}\npassword = {layout.password()}\n'
            f'tenant-name = {layout.PROJECT}\ndomain-name = Default\n'
            f'region = {layout.REGION}\n')


def controller(plugin, name=SERVICE, directory=None):
    """The plugin's controller service, a service of the cloud called
    `name`, and the path of its socket (in `directory`).
    """
    directory = directory or layout.directory() / 'cinder-csi'
    directory.mkdir(parents=True, exist_ok=True)
    conf = directory / 'cloud.conf'
    conf.write_text(cloud_conf())
    socket = directory / 'csi.sock'
    socket.unlink(missing_ok=True)
    return services.Service(
        name=name,
        command=(plugin, '--endpoint', f'unix://{socket}', '--cloud-config',
                 conf, '--provide-node-service=false', '--cluster',
                 'scenario', '--v', '4')), socket


def call(client, socket, calls):
    """Run the client on `calls`; the answers it printed, each a dict."""
    proc = process.run([client, '-endpoint', f'unix://{socket}',
                        *(each.argument() for each in calls)], check=False)
    answers, errors = [], []
    for line in proc.stdout.splitlines():
        try:
            answers.append(json.loads(line))
        except json.JSONDecodeError:
            errors.append(line)
    check(proc.returncode == 0 and len(answers) == len(calls),
          f'cinder-csi-publish exited {proc.returncode} after '
          f'{len(answers)} of {len(calls)} calls: {" ".join(errors)}')
    return answers


def publishes_read_only(call):
    """Whether a publish call asks for a read-only attachment: a reader-only
    access mode, or readonly (a PersistentVolume with spec.csi.readOnly).
    """
    return READER in call.arguments or 'readonly' in call.arguments


def answer_problems(calls, answers):
    """What the answers say against the calls: each its expected code,
    each validate confirmed or not as expected, the capabilities with
    PUBLISH_READONLY, each publish's context saying whether the node
    stages the volume read-only.
    """
    problems = []
    for expected, answer in zip(calls, answers):
        name = expected.argument()
        if answer['code'] != expected.code:
            problems.append(f'{name}: {answer["code"]}, not {expected.code}'
                            f' ({answer.get("message", "")})')
        if (expected.confirmed is not None and
                answer.get('confirmed') is not expected.confirmed):
            problems.append(f'{name}: confirmed {answer.get("confirmed")}, '
                            f'not {expected.confirmed}')
        if (expected.arguments[0] == 'capabilities' and 'PUBLISH_READONLY'
                not in answer.get('capabilities', [])):
            problems.append(f'{name}: no PUBLISH_READONLY among '
                            f'{answer.get("capabilities")}')
        context = answer.get('publish_context') or {}
        if (expected.arguments[0] == 'publish' and answer['code'] == 'OK' and
                (context.get('ReadOnly') == 'true') !=
                publishes_read_only(expected)):
            problems.append(f'{name}: publish context {context}')
    return problems


def attachment_problems(cloud, expected):
    """Nova's and Cinder's records against `expected`, {(server, volume):
    mode or None for no attachment}: Nova lists the mode at 2.105, Cinder's
    attachment record has it.
    """
    problems = []
    for (server_id, volume_id), mode in expected.items():
        name = f'{volume_id} on {server_id}'
        listed = cloud.attached(server_id, volume_id)
        records = [record for record in cloud.cinder_attachments(volume_id)
                   if record.get('instance') == server_id]
        if mode is None:
            if listed or records:
                problems.append(f'{name}: attached ({len(records)} Cinder '
                                'attachments), not refused')
            continue
        if not listed or listed.get('attach_mode') != mode:
            problems.append(f'{name}: Nova lists '
                            f'{listed and listed.get("attach_mode")}, not '
                            f'{mode}')
        modes = sorted(record.get('attach_mode') for record in records)
        if modes != [mode]:
            problems.append(f'{name}: Cinder attachments {modes}, not '
                            f'[{mode}]')
    return problems


def cinder_csi(tracker):
    """The step; its detail. Whatever fails, the plugin is stopped and the
    attachments Nova lists are detached before the step ends.
    """
    cloud = tracker.cloud
    first, second = gophercloud_step.one_server_per_host(tracker)
    shared = tracker.new_volume('cinder-csi-rox')
    control = tracker.new_volume('cinder-csi-rwo')
    single = tracker.new_volume('cinder-csi-single', multiattach=False)
    # A PersistentVolume with spec.csi.readOnly: a writer, published
    # readonly.
    read_only_pv = tracker.new_volume('cinder-csi-ro-pv', multiattach=False)
    regions = {volume: tracker.slot_region(volume)
               for volume in (shared, control, single, read_only_pv)}
    publishes = {(first, shared): 'ro', (second, shared): 'ro',
                 (first, control): 'rw', (second, read_only_pv): 'ro',
                 (second, single): None}
    calls = [Call(('capabilities',)),
             Call(('validate', shared, READER), confirmed=True),
             Call(('validate', single, READER), confirmed=False),
             Call(('publish', shared, first, READER)),
             Call(('publish', shared, second, READER)),
             Call(('publish', shared, first, READER)),
             Call(('publish', shared, first, WRITER), 'AlreadyExists'),
             Call(('publish', control, first, WRITER)),
             Call(('publish', read_only_pv, second, WRITER, 'readonly')),
             Call(('publish', single, second, READER), 'InvalidArgument')]
    unpublishes = [Call(('unpublish', volume_id, server_id))
                   for (server_id, volume_id), mode in publishes.items()
                   if mode]
    plugin, client = build()
    service, socket = controller(plugin)
    report = tracker.report.cinder_csi = {'calls': []}
    attached = []
    service.start()
    try:
        rest.wait('the cinder-csi controller socket', lambda: socket.exists()
                  or check(service.pid(), 'the plugin exited: ' +
                           service.log_tail()), SOCKET_SECONDS)
        try:
            answers = call(client, socket, calls)
        finally:
            # Whatever Nova lists goes in the ledger, to be detached: a
            # refused publish that attached anyway (as released cinder-csi
            # does) was attached rw.
            for (server_id, volume_id), mode in publishes.items():
                if cloud.attached(server_id, volume_id):
                    tracker.expect(server_id, volume_id, mode or 'rw',
                                   regions[volume_id])
                    attached.append((server_id, volume_id))
        report['calls'] += answers
        problems = (answer_problems(calls, answers) +
                    attachment_problems(cloud, publishes))
        check(not problems, '; '.join(problems))
        views = attachment_checks.check_views(tracker, [first, second])
        answers = call(client, socket, unpublishes)
        report['calls'] += answers
        for server_id, volume_id in list(attached):
            if not cloud.attached(server_id, volume_id):
                tracker.forget(server_id, volume_id)
                attached.remove((server_id, volume_id))
        problems = answer_problems(unpublishes, answers) + [
            f'{volume_id} still attached to {server_id}'
            for server_id, volume_id in attached] + attachment_problems(
                cloud, dict.fromkeys(publishes))
        check(not problems, '; '.join(problems))
    finally:
        for problem in gophercloud_step.detach_all(tracker, attached):
            process.say(f'scenario: cinder-csi: not detached: {problem}')
        service.stop()
        report['log'] = service.log_tail(40)
    return (f'cinder-csi published one multiattach volume '
            f'MULTI_NODE_READER_ONLY to {first} and {second} (ro in Nova and '
            f'Cinder), a control SINGLE_NODE_WRITER to {first} (rw), a '
            f'SINGLE_NODE_WRITER volume readonly to {second} (ro); a writer '
            f'publish over the ro one AlreadyExists, a reader-only publish '
            f'of a volume without multiattach InvalidArgument, nothing '
            f'attached; {views}; all unpublished, none left')
