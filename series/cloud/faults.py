"""Faults on the running cloud, each in the middle of an operation on a
read-only attachment, each confirmed to have happened (the killed
process gone, no RabbitMQ connection of before its restart left); what
each left and how it was cleaned is series.cloud.fault_aftermath's.
"""

import datetime
import os
import re
import signal
import time

from series.cloud.client import check
from series.cloud import fault_aftermath
from series.cloud import hosts
from series.cloud import layout
from series.cloud import rest
from series.cloud import services
from series.cloud import steps
from series import config
from series import process


def say(message):
    process.say(f'fault: {message}')


def kill(service):
    """SIGKILL the service; its PID, once /proc shows that process gone."""
    pid = service.pid()
    check(pid is not None, f'{service.name} is not running')
    os.kill(pid, signal.SIGKILL)
    rest.wait(f'{service.name} (PID {pid}) gone after SIGKILL',
              lambda: services.start_time(pid) is None, 10, interval=0.05)
    return pid


def rabbitmq_connections():
    """The Erlang PIDs of RabbitMQ's client connections."""
    return connection_pids(services.rabbitmqctl(
        'list_connections', '--no-table-headers', 'pid').stdout)


def connection_pids(listing):
    """The Erlang PIDs (`<node.N.N.N>`) in rabbitmqctl's listing, without
    the column header it prints unless told not to.
    """
    return {line.strip() for line in listing.splitlines()
            if re.fullmatch(r'<[^<>\s]+>', line.strip())}


def restart_confirmed(before, after):
    """Problems unless RabbitMQ had connections before its restart and
    none of them is among those after it (every client reconnected).
    """
    if not before:
        return ['RabbitMQ had no connection before its restart']
    kept = before & after
    if kept:
        return [f'{len(kept)} of RabbitMQ\'s connections outlived its '
                'restart']
    return []


def cinder_volume_killed(tracker):
    cloud = tracker.cloud
    root = tracker.new_volume('fault-a-root', image=cloud.image())
    region = tracker.slot_region(root)
    volume_service = services.by_name('cinder-volume')
    bdm = [{'boot_index': 0, 'uuid': root, 'source_type': 'volume',
            'destination_type': 'volume', 'attach_mode': 'ro'}]
    started = time.monotonic()
    reply = cloud.create_servers('fault-a', bdm, count=4)
    pid = kill(volume_service)
    injected = (f'cinder-volume (PID {pid}) killed with SIGKILL right after '
                'the 202 of a multi-create of 4 from one ro multiattach '
                'volume (the PID then gone); started again 10 s later')
    say(injected)
    server_ids = cloud.reserved(reply)
    time.sleep(10)
    services.start(volume_service, timeout=180, admin=cloud.admin)
    aftermath = fault_aftermath.Aftermath(cloud, server_ids, [root])
    expect_holders(tracker, aftermath, server_ids, root, region)
    guests = fault_aftermath.guest_views(tracker, server_ids)
    # Its servers are deleted below, before the step's own comparison.
    entry = fault_aftermath.record(
        tracker, 'cinder-volume killed during a multi-create', injected,
        server_ids, [root], started, aftermath, guests,
        ledger=steps.ledger_problems(tracker, {}))
    remove(tracker, server_ids, [root])
    statuses = [entry['left']['servers'][server_id]['status']
                for server_id in server_ids]
    return (f'{statuses.count("ACTIVE")} of 4 ACTIVE, '
            f'{statuses.count("ERROR")} in ERROR with a fault; '
            f'{aftermath.healed()}; {fault_aftermath.guests_text(guests)} '
            f'({entry["seconds"]}s)')


def expect_holders(tracker, aftermath, server_ids, volume_id, region):
    """Place each of the servers that holds an attachment of the volume
    as Cinder showed it once the fault was cleaned, whatever its status
    (a server in ERROR may run a guest, which guest_views() checks), and
    expect the attachment ro.
    """
    holders = {attachment['server'] for attachment in
               aftermath.facts['volumes'][volume_id]['attachments']}
    for server_id in server_ids:
        if server_id in holders:
            tracker.placed(server_id)
            tracker.expect(server_id, volume_id, 'ro', region)


# The instance action event of nova-compute's attach.
ATTACH_EVENT = 'compute_attach_volume'


def nova_compute_killed(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[2]
    host = hosts.by_name(cloud.host_of(server_id))
    compute = services.compute(host)
    volume = tracker.new_volume('fault-b')
    region = tracker.slot_region(volume)
    started = time.monotonic()
    cloud.member.call(
        'POST', 'nova-api', f'/servers/{server_id}/os-volume_attachments',
        {'volumeAttachment': {'volumeId': volume, 'attach_mode': 'ro'}},
        microversion='2.105', expect=202)
    # Killed once nova-compute has started the attach.
    rest.wait('the attach reaching nova-compute', lambda: ATTACH_EVENT in (
        fault_aftermath.latest_action(cloud, server_id)[0] or ''), 60,
        interval=0.05)
    pid = kill(compute)
    # Read once nothing can finish the event any more: an event still
    # unfinished 5 s after its process died was cut off by the kill.
    time.sleep(5)
    action, unfinished = fault_aftermath.latest_action(cloud, server_id)
    interrupted = ATTACH_EVENT in (unfinished or '').split(', ')
    injected = (f'nova-compute of {host.name} (PID {pid}) killed with '
                f'SIGKILL during an ro attach accepted with 202 (the PID '
                f'then gone; instance action 5 s later: {action}; '
                f'unfinished: {unfinished or "none"}); started again then')
    say(injected)
    services.start(compute, timeout=180, admin=cloud.admin)
    check(interrupted, f'the attach was not under way when nova-compute '
          f'was killed: {action}')
    aftermath = fault_aftermath.Aftermath(cloud, [server_id], [volume])
    if aftermath.facts['volumes'][volume]['attachments']:
        tracker.expect(server_id, volume, 'ro', region)
        outcome = 'attached ro'
    else:
        outcome = 'not attached'
    guests = fault_aftermath.guest_views(tracker, [server_id],
                                         aftermath.guest_restart())
    fault_aftermath.record(
        tracker, 'nova-compute killed during an ro attach accepted with '
        '202', injected, [server_id], [volume], started, aftermath, guests,
        attach_interrupted=interrupted)
    return (f'{outcome}; {aftermath.healed()}; '
            f'{fault_aftermath.guests_text(guests)}; {host.name} up again')


def rabbitmq_restarted(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[3]
    started = time.monotonic()
    logs = {host.name: log_size(host) for host in hosts.HOSTS}
    source, destination, domain = held_live_migration(tracker, server_id)
    status = migration_status(cloud, server_id)
    check(status == 'running', f'the live migration was {status} before '
          'RabbitMQ was restarted')
    wait_lifecycle_handled(hosts.by_name(destination), server_id,
                           logs[destination])
    connections = rabbitmq_connections()
    restart_rabbitmq()
    restarted = datetime.datetime.now(datetime.timezone.utc)
    injected = (f'RabbitMQ restarted (rabbitmqctl stop_app; start_app) '
                f'while the live migration {source} -> {destination} of an '
                f'ro server was {status}, copying memory at '
                f'{HELD_MIB_PER_SECOND} MiB/s until every service was back')
    say(injected)
    wait_services_up(cloud, since=restarted)
    throttle_migration(hosts.by_name(source), domain, UNTHROTTLED)
    reconnected = rabbitmq_connections()
    problems = restart_confirmed(connections, reconnected)
    check(not problems, '; '.join(problems))
    injected += (f' (none of its {len(connections)} connections of before '
                 f'left, {len(reconnected)} new)')
    volumes = attached_volumes(cloud, server_id)
    aftermath = fault_aftermath.Aftermath(cloud, [server_id], volumes)
    migration = migration_status(cloud, server_id)
    # Where the server must be: a live migration completes or rolls back.
    tracker.placed(server_id, destination if migration == 'completed'
                   else source)
    guests = fault_aftermath.guest_views(tracker, [server_id],
                                         aftermath.guest_restart())
    entry = fault_aftermath.record(
        tracker, 'RabbitMQ restarted during a live migration', injected,
        [server_id], volumes, started, aftermath, guests)
    host = entry['left']['servers'][server_id]['host']
    return (f'server {entry["left"]["servers"][server_id]["status"]} on '
            f'{host} (migration {migration}), every service back; '
            f'{aftermath.healed()}; {fault_aftermath.guests_text(guests)}')


# Nova 34.0.0 in native threading mode handles libvirt's lifecycle events
# on libvirt's event loop thread, and the handler waits for RPC replies:
# one lost in the restart (60 s) starves libvirt's keepalive, libvirtd
# closes the connection, and the next _get_connection deadlocks in the
# close callback on its own _wrapped_conn_lock (seen in a run here:
# nova-compute stuck, every later build on that host in BUILD). That is
# Nova's bug, not this step's subject, so the restart waits until the
# destination has handled the incoming domain's Started event, and the
# migration is let go only once every service has reported in after it.
LIFECYCLE_SECONDS = 30
# The handler's lines once its instance lookup through the conductor has
# answered (`Checking state` is debug; the others follow it when the
# power states agree).
LIFECYCLE_HANDLED = ('Checking state',
                     'Synchronizing instance power state after lifecycle',
                     'During the sync_power process',
                     'During sync_power_state')


def log_size(host):
    path = layout.log(f'nova-compute-{host.key}')
    return path.stat().st_size if path.exists() else 0


def lifecycle_handled(text, server_id):
    """Whether nova-compute's log `text` shows the server's Started event
    handled past its RPC call (seen in a run: an incoming domain is
    paused, so the handler logs `Checking state` and then nothing).
    """
    lines = [line for line in text.splitlines()
             if f'[instance: {server_id}]' in line]
    started = [number for number, line in enumerate(lines)
               if 'VM Started (Lifecycle Event)' in line]
    return bool(started) and any(
        marker in line for line in lines[started[-1] + 1:]
        for marker in LIFECYCLE_HANDLED)


def wait_lifecycle_handled(host, server_id, offset):
    path = layout.log(f'nova-compute-{host.key}')

    def handled():
        with open(path, errors='replace') as log_file:
            log_file.seek(offset)
            return lifecycle_handled(log_file.read(), server_id)
    try:
        rest.wait(f'{host.name} handling the Started event', handled,
                  LIFECYCLE_SECONDS, interval=0.2)
    except config.SeriesError:
        say(f'{host.name} logged no handled Started event of {server_id} '
            f'in {LIFECYCLE_SECONDS}s; restarting RabbitMQ anyway')


# A small guest's memory crosses between the hosts in a second or two, less
# than RabbitMQ takes to restart. Slowed down, the migration is still
# copying memory while RabbitMQ is away; it is let go once every service
# is back. Unslowed, the restart could fall on the RPC calls that end the
# migration, and a lost reply leaves the server migrating until
# [DEFAULT]long_rpc_timeout (30 minutes): Nova's known limitation with
# non-durable queues, not what this step is about.
HELD_MIB_PER_SECOND = 1
UNTHROTTLED = 8796093022207  # QEMU's maximum, in MiB/s
ATTEMPTS = 3


def held_live_migration(tracker, server_id):
    """Live-migrate the server and slow its memory copy down as soon as
    libvirt runs it; should the copy complete first, migrate it back and
    try again; a migration that fails fails the step. (source,
    destination, domain name).
    """
    cloud = tracker.cloud
    for _ in range(ATTEMPTS):
        source = cloud.host_of(server_id)
        destination = tracker.other_host(server_id)
        domain = cloud.server(server_id)['OS-EXT-SRV-ATTR:instance_name']
        cloud.action(server_id, {'os-migrateLive': {
            'host': destination, 'block_migration': 'auto'}}, admin=True)
        host = hosts.by_name(source)
        outcome = {}

        def held_or_over():
            if throttle_migration(host, domain, HELD_MIB_PER_SECOND):
                outcome['held'] = True
                return True
            outcome['status'] = migration_status(cloud, server_id)
            return outcome['status'] in ('completed', 'error', 'failed')
        rest.wait('the live migration copying memory', held_or_over, 120,
                  interval=0.05)
        if outcome.get('held'):
            return source, destination, domain
        check(outcome['status'] == 'completed',
              f'the live migration {source} -> {destination} ended '
              f'{outcome["status"]} before RabbitMQ was restarted')
        say(f'the live migration {source} -> {destination} ended before it '
            'could be slowed down; again the other way')
        cloud.wait_server(server_id)
    check(False, f'no live migration could be slowed down in {ATTEMPTS} '
          'attempts')


def throttle_migration(host, domain, mib_per_second):
    """Set the bandwidth of the domain's migration job; whether a job was
    running before and after (Nova starts its job with an unlimited
    bandwidth, so a speed set before the job starts does not hold).
    """
    def job_running():
        info = hosts.virsh(host, 'domjobinfo', domain, check=False)
        return info.returncode == 0 and 'Unbounded' in info.stdout
    if not job_running():
        return False
    speed = hosts.virsh(host, 'migrate-setspeed', domain,
                        str(mib_per_second), check=False)
    return speed.returncode == 0 and job_running()


def migration_status(cloud, server_id):
    migrations = cloud.admin.get(
        'nova-api', f'/os-migrations?instance_uuid={server_id}'
        '&migration_type=live-migration', microversion='2.80')['migrations']
    if not migrations:
        return None
    return max(migrations, key=lambda entry: entry['id'])['status']


def restart_rabbitmq():
    for action in ('stop_app', 'start_app'):
        services.rabbitmqctl(action)


def wait_services_up(cloud, since, timeout=300):
    """Until every RPC service has reported its state after `since`: a
    round trip through RabbitMQ (nova-compute's report goes through the
    conductor), which an up state from before the restart does not show.
    """
    expected = {service.reports_as for service in services.all_services()
                if service.reports_as}
    rest.wait('every service reporting again after RabbitMQ', lambda: (
        expected <= services.reported_up(cloud.admin, since=since)),
        timeout, interval=5)


def attached_volumes(cloud, server_id):
    return [attachment['volumeId']
            for attachment in cloud.attachments(server_id)]


def remove(tracker, server_ids, volume_ids):
    """Delete what a fault run made; check its volumes come back free."""
    cloud = tracker.cloud
    for server_id in server_ids:
        cloud.delete_server(server_id)
        for key in [key for key in tracker.ledger.modes
                    if key[0] == server_id]:
            tracker.forget(*key)
        tracker.ledger.remove(server_id)
    cloud.wait_deleted(server_ids)
    for volume_id in volume_ids:
        cloud.wait_volume(volume_id, ('available',))


FAULTS = (
    steps.Step('cinder-volume-killed', 'fault: cinder-volume killed during '
               'a multi-create of 4 from one ro multiattach volume',
               cinder_volume_killed),
    steps.Step('nova-compute-killed', 'fault: nova-compute killed during '
               'an ro attach accepted with 202', nova_compute_killed,
               needs='multi-create'),
    steps.Step('rabbitmq-restarted', 'fault: RabbitMQ restarted during a '
               'live migration', rabbitmq_restarted, needs='multi-create'),
)
