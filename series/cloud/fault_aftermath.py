"""What a fault left once Nova and Cinder had settled on their own,
before any cleaning, then each documented command that cleaned it and
why (series.cloud.faults injects the faults). Each fault ends with every
server ACTIVE or in ERROR with a fault, no Cinder attachment without a
server and its BDM (nor a BDM without its attachment), no volume or
attachment stuck (error states included), and every server that runs a
guest checked down to its disks (a read-only attachment still
read-only); a server in ERROR is reported as such.
"""

import subprocess
import time

from series.cloud import attachment_checks
from series.cloud.client import check
from series.cloud.client import Failed
from series.cloud import hosts
from series.cloud import layout
from series.cloud import rest
from series.cloud import service_venv
from series.cloud import services
from series import config
from series import process

# A volume or attachment status nothing moves on from by itself: an
# operator has to act (clean()).
STUCK = ('reserved', 'attaching', 'detaching', 'error', 'error_attaching',
         'error_detaching')
# A round of nova-compute's periodic tasks (60 s apart), and then some.
SETTLE_SECONDS = 90


def say(message):
    process.say(f'fault: {message}')


def state(cloud, server_ids, volume_ids):
    """(facts, problems) of the servers and volumes as Nova and Cinder
    show them.
    """
    facts = {'servers': {}, 'volumes': {}}
    problems = []
    bdms = {}
    for server_id in server_ids:
        reply = cloud.admin.call('GET', 'nova-api', f'/servers/{server_id}',
                                 microversion='2.105')
        if reply.status == 404:
            # Nothing deletes a fault's servers before they are judged.
            facts['servers'][server_id] = 'gone'
            problems.append(f'server {server_id} is gone (404)')
            continue
        server = reply.body['server']
        fault = server.get('fault', {}).get('message')
        facts['servers'][server_id] = {
            'status': server['status'], 'task': server[
                'OS-EXT-STS:task_state'], 'host': server[
                    'OS-EXT-SRV-ATTR:host'], 'fault': fault}
        if server['status'] not in ('ACTIVE', 'ERROR') or server[
                'OS-EXT-STS:task_state']:
            problems.append(f'server {server_id} is {server["status"]}/'
                            f'{server["OS-EXT-STS:task_state"]}')
        if server['status'] == 'ERROR' and not fault:
            problems.append(f'server {server_id} is in ERROR with no fault')
        action, unfinished = latest_action(cloud, server_id)
        facts['servers'][server_id]['action'] = action
        if unfinished:
            problems.append(f'server {server_id}: {action} not finished '
                            f'({unfinished})')
        bdms.update(server_bdms(cloud, server_id))
    for volume_id in volume_ids:
        volume = cloud.volume(volume_id)
        records = cloud.cinder_attachments(volume_id)
        facts['volumes'][volume_id] = {
            'status': volume['status'],
            'attachments': [{'id': record['id'], 'server': record[
                'instance'], 'status': record['status'],
                'mode': record.get('attach_mode')} for record in records]}
        if volume['status'] in STUCK:
            problems.append(f'volume {volume_id} stuck {volume["status"]}')
        for record in records:
            # Other servers sharing a multiattach volume.
            if record['instance'] not in facts['servers']:
                bdms.update(server_bdms(cloud, record['instance']))
            if record['status'] in STUCK:
                problems.append(f'Cinder attachment {record["id"]} of '
                                f'{volume_id} stuck {record["status"]}')
            if bdms.get((record['instance'], volume_id)) != record['id']:
                problems.append(
                    f'Cinder attachment {record["id"]} of {volume_id} '
                    f'({record["status"]}) has no server with its BDM '
                    f'(server {record["instance"]})')
        ids = {record['id'] for record in records}
        for (server_id, bdm_volume), attachment_id in bdms.items():
            if bdm_volume == volume_id and attachment_id not in ids:
                problems.append(f'server {server_id} has a BDM of '
                                f'{volume_id} whose attachment '
                                f'{attachment_id} Cinder does not have')
    return facts, problems


def server_bdms(cloud, server_id):
    """{(server, volume): attachment id} of the server's volumes as Nova
    lists them; nothing for a server that does not exist.
    """
    reply = cloud.member.call(
        'GET', 'nova-api', f'/servers/{server_id}/os-volume_attachments',
        microversion='2.105')
    if reply.status == 404:
        return {}
    return {(server_id, attachment['volumeId']): attachment['attachment_id']
            for attachment in reply.body['volumeAttachments']}


def latest_action(cloud, server_id):
    """(the server's latest instance action with its events' results,
    what of it has not finished). An action whose message was lost has
    no event, or an event that never finishes.
    """
    latest, events = latest_events(cloud, server_id)
    if latest is None:
        return None, None
    summary = f'{latest["action"]}: ' + (', '.join(
        f'{event["event"]} {event["result"]}' for event in events) or
        'no event')
    unfinished = [event['event'] for event in events
                  if not event['finish_time']]
    if not events:
        unfinished = ['no event started']
    return summary, ', '.join(unfinished)


def latest_events(cloud, server_id):
    """(the server's latest instance action, its events as an admin sees
    them, with their details); (None, []) without an action.
    """
    actions = cloud.admin.get(
        'nova-api', f'/servers/{server_id}/os-instance-actions',
        microversion='2.105')['instanceActions']
    if not actions:
        return None, []
    latest = max(actions, key=lambda entry: entry['start_time'])
    detail = cloud.admin.get(
        'nova-api', f'/servers/{server_id}/os-instance-actions/'
        f'{latest["request_id"]}', microversion='2.105')['instanceAction']
    return latest, detail.get('events', [])


def settle(cloud, server_ids, volume_ids, timeout=SETTLE_SECONDS):
    """Wait for Nova and Cinder to finish on their own; the state then."""
    last = {}

    def settled():
        last['state'] = state(cloud, server_ids, volume_ids)
        return not last['state'][1]
    try:
        rest.wait('the cloud settling after the fault', settled, timeout,
                  interval=5)
    except Exception:  # the problems are the result, reported
        pass
    return last['state']


def clean(cloud, server_ids, volume_ids):
    """What an operator does with what is left, as doc/source/cloud.rst
    documents it: a server's volume whose attachment is missing or stuck,
    which Nova will not detach, gets a new attachment with `nova-manage
    volume_attachment refresh` on the stopped server, which is then
    started; a Cinder attachment with no server or BDM behind it (among
    them the one a refresh replaced) is deleted (`cinder
    attachment-delete`). The commands run, each {'command', 'why'}.
    """
    bdms, records = attachments(cloud, server_ids, volume_ids)
    done = []
    for (server_id, volume_id), attachment_id in bdms.items():
        record = records.get(attachment_id)
        if server_id in server_ids and volume_id in volume_ids and (
                record is None or record['status'] in STUCK):
            why = (f'the BDM of {volume_id} on {server_id} names attachment '
                   f'{attachment_id}, which Cinder '
                   + ('does not have' if record is None
                      else f'holds {record["status"]}'))
            done += [{'command': command, 'why': why} for command
                     in refresh(cloud, server_id, volume_id)]
    if done:
        bdms, records = attachments(cloud, server_ids, volume_ids)
    for record in records.values():
        if bdms.get((record['instance'], record['volume_id'])) != record['id']:
            cloud.admin.call('DELETE', 'cinder-api',
                             f'/{cloud.admin.project_id}/attachments/'
                             f'{record["id"]}', microversion='3.54',
                             expect=200)
            done.append({
                'command': f'cinder attachment-delete {record["id"]}',
                'why': f'{record["status"]} attachment of '
                       f'{record["volume_id"]} that no BDM of server '
                       f'{record["instance"]} names'})
    return done


def attachments(cloud, server_ids, volume_ids):
    """({(server, volume): attachment id} of the BDMs of `server_ids` and
    of the servers the volumes' attachments name, {attachment id: Cinder's
    record} of `volume_ids`' attachments).
    """
    bdms = {}
    for server_id in server_ids:
        bdms.update(server_bdms(cloud, server_id))
    records = {}
    for volume_id in volume_ids:
        for record in cloud.cinder_attachments(volume_id):
            records[record['id']] = dict(record, volume_id=volume_id)
            if (record['instance'], volume_id) not in bdms:
                bdms.update(server_bdms(cloud, record['instance']))
    return bdms, records


def refresh(cloud, server_id, volume_id):
    """Stop the server, `nova-manage volume_attachment get_connector` on
    its host, `nova-manage volume_attachment refresh`, start it.
    """
    host = hosts.by_name(cloud.host_of(server_id))
    if cloud.server(server_id)['status'] != 'SHUTOFF':
        cloud.action(server_id, {'os-stop': None})
        cloud.wait_server(server_id, ('SHUTOFF',))
    # Its standard output only: nova-manage warns on standard error.
    connector = subprocess.run(host.namespaced(
        service_venv.bin('nova-manage'), '--config-file',
        services.conf('nova', f'compute-{host.key}.conf'),
        'volume_attachment', 'get_connector', '--json'), check=True, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    path = layout.directory() / f'connector-{host.name}.json'
    path.write_text(connector)
    process.run([service_venv.bin('nova-manage'), '--config-file',
                 services.conf('nova', 'nova.conf'), 'volume_attachment',
                 'refresh', server_id, volume_id, path])
    cloud.action(server_id, {'os-start': None})
    cloud.wait_server(server_id)
    return [f'openstack server stop {server_id}',
            f'nova-manage volume_attachment get_connector --json (on '
            f'{host.name})',
            f'nova-manage volume_attachment refresh {server_id} {volume_id} '
            'CONNECTOR_FILE', f'openstack server start {server_id}']


class Aftermath:
    """What a fault left once Nova and Cinder had settled on their own
    (`left_before_cleaning`, with its problems), and each command that
    cleaned it and why (`cleaned_by`).
    """

    def __init__(self, cloud, server_ids, volume_ids, rounds=3):
        facts, problems = settle(cloud, server_ids, volume_ids)
        self.left_before_cleaning = {'state': facts, 'problems': problems}
        self.cleaned_by = []
        for _ in range(rounds):
            if not problems:
                break
            say(f'left: {"; ".join(problems)}')
            done = clean(cloud, server_ids, volume_ids)
            say('cleaned with: ' + ('; '.join(
                entry['command'] for entry in done) or 'nothing to run'))
            self.cleaned_by += done
            facts, problems = settle(cloud, server_ids, volume_ids,
                                     timeout=20)
        self.facts = facts

    def commands(self):
        return [entry['command'] for entry in self.cleaned_by]

    def guest_restart(self):
        """'restarted' if cleaning stopped and started a server (a
        refresh), else 'kept' (check_views()' guest_restart).
        """
        return ('restarted' if any(command.startswith('openstack server stop')
                                   for command in self.commands())
                else 'kept')

    def healed(self):
        """How the cloud came back, in words."""
        if not self.left_before_cleaning['problems']:
            return 'nothing left once Nova and Cinder had settled'
        return (f'{len(self.left_before_cleaning["problems"])} problems '
                f'left, cleaned with {"; ".join(self.commands())}'
                if self.cleaned_by else 'problems left, nothing to run')


def record(tracker, name, injected, server_ids, volume_ids, started,
           aftermath, guests, **facts):
    """The fault's entry in the report, with `facts` of its own; fails if
    anything is left, or if `facts` holds a 'ledger' of problems (the
    ledger compared with the cloud before the fault deletes its servers).
    """
    facts_left, problems = state(tracker.cloud, server_ids, volume_ids)
    entry = {'fault': name, 'injected': injected,
             'seconds': round(time.monotonic() - started, 1),
             'left_before_cleaning': aftermath.left_before_cleaning,
             'cleaned_by': aftermath.cleaned_by,
             'left': facts_left, 'problems': problems, 'guests': guests,
             **facts}
    tracker.report.faults.append(entry)
    problems = (problems + guests.get('wrong', []) +
                [f'the ledger: {problem}'
                 for problem in facts.get('ledger', [])])
    check(not problems, '; '.join(problems))
    return entry


def guest_views(tracker, server_ids, guest_restart=None):
    """The scenario's checks of every attachment of each server that runs
    a guest, whatever its status. {'checked': [...], 'no guest': {server:
    status}, 'wrong': [what check_views() found wrong, and each ACTIVE
    server whose guest is not running]}: record() fails the step on it
    once the fault's entry is in the report.
    """
    cloud = tracker.cloud
    running, without, wrong = [], {}, []
    for server_id in server_ids:
        server = cloud.server(server_id)
        state = domain_state(server['OS-EXT-SRV-ATTR:host'],
                             server['OS-EXT-SRV-ATTR:instance_name'])
        if state == 'running':
            running.append(server_id)
        elif server['status'] == 'ACTIVE':
            wrong.append(f'{server_id} is ACTIVE, its guest {state}')
        else:
            without[server_id] = f'{server["status"]}, domain {state}'
    if running:
        try:
            attachment_checks.check_views(tracker, running, guest_restart)
        except Failed as failure:
            wrong.append(str(failure))
    return {'checked': running, 'no guest': without, 'wrong': wrong}


def domain_state(host_name, domain):
    """libvirt's state of the domain ('running', 'paused', 'shut off'...),
    or 'none' where the server has no host or its host no such domain;
    a libvirtd that cannot tell is an error, never a guest not running.
    """
    if not host_name or not domain:
        return 'none'
    read = hosts.virsh(hosts.by_name(host_name), 'domstate', domain,
                       check=False)
    if read.returncode == 0:
        return read.stdout.strip()
    # virsh says 'failed to get domain', libvirt 'Domain not found'.
    if ('failed to get domain' in read.stderr or
            'Domain not found' in read.stderr):
        return 'none'
    raise config.SeriesError(f'{host_name}: virsh domstate {domain} failed '
                             f'(exit {read.returncode}): '
                             f'{read.stderr.strip()}')


def guests_text(guests):
    """What guest_views() checked, in words (never more than it did)."""
    checked = len(guests['checked'])
    if guests.get('wrong'):
        text = f'{checked} guests checked: {"; ".join(guests["wrong"])}'
    elif checked:
        text = f'{checked} guests checked, their ro disks read-only'
    else:
        text = 'no guest to check'
    if guests['no guest']:
        text += '; without a guest: ' + ', '.join(
            f'{server} {status}'
            for server, status in sorted(guests['no guest'].items()))
    return text
