"""The scenario's steps that restart, move or swap what is attached (4 to
10): hard reboot, live and cold migration, swap, detach and re-attach,
shelve and evacuate, each a function of the tracker that returns the
step's detail.
"""

from series.cloud import attachment_checks
from series.cloud.client import check
from series.cloud import content
from series.cloud import hosts
from series.cloud import layout
from series.cloud import probes
from series.cloud import rest
from series.cloud import services


def attach_new_volume(tracker, server_id, name, mode):
    """A new volume (not multiattach) attached to the running server in
    `mode` and checked; its id.
    """
    volume_id = tracker.new_volume(name, multiattach=False)
    tracker.attach(server_id, volume_id, mode)
    attachment_checks.check_views(tracker, [server_id], guest_restart='kept')
    return volume_id


def hard_reboot(tracker):
    server_id = tracker.servers[1]
    tracker.cloud.action(server_id, {'reboot': {'type': 'HARD'}})
    tracker.cloud.wait_server(server_id)
    return 'hard reboot: ' + attachment_checks.check_views(
        tracker, [server_id], guest_restart='restarted')


def live_migration(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[1]
    attach_new_volume(tracker, server_id, 'live-rw', 'rw')
    path = [cloud.host_of(server_id)]
    for _ in range(2):
        destination = tracker.other_host(server_id)
        cloud.action(server_id, {'os-migrateLive': {
            'host': destination, 'block_migration': 'auto'}}, admin=True)
        cloud.wait_server(server_id, host=destination)
        tracker.placed(server_id, destination)
        attachment_checks.check_views(tracker, [server_id],
                                      guest_restart='kept')
        path.append(destination)
    return (f'ro root, ro data and rw volume live-migrated '
            f'{" -> ".join(path)}, checked on each host, the guest '
            'running throughout (same boot id)')


def cold_migration(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[2]
    source = cloud.host_of(server_id)
    cloud.action(server_id, {'resize': {
        'flavorRef': cloud.flavor('mae.small')}})
    destination = tracker.other_host(server_id)
    cloud.wait_server(server_id, ('VERIFY_RESIZE',), host=destination)
    cloud.action(server_id, {'confirmResize': None}, expect=204)
    cloud.wait_server(server_id, host=destination)
    tracker.placed(server_id, destination)
    attachment_checks.check_views(tracker, [server_id],
                                  guest_restart='restarted')
    cloud.action(server_id, {'resize': {
        'flavorRef': cloud.flavor('mae.tiny')}})
    cloud.wait_server(server_id, ('VERIFY_RESIZE',), host=source)
    attachment_checks.check_views(tracker, [server_id],
                                  guest_restart='restarted')
    cloud.action(server_id, {'revertResize': None})
    server = cloud.wait_server(server_id, host=destination)
    check(server['flavor']['original_name'] == 'mae.small',
          f'flavor after the revert: {server["flavor"]}')
    attachment_checks.check_views(tracker, [server_id],
                                  guest_restart='restarted')
    return (f'resized {source} -> {destination} and confirmed; resized '
            f'back to {source}, checked there, reverted to '
            f'{destination}; a new guest boot each time')


# What Nova's libvirt driver logs when it pauses a guest for the copy of
# its read-only disk (LibvirtDriver._paused_if_read_only).
PAUSED_FOR_COPY = 'Pausing the guest while its read-only disk'


def compute_log_size(host):
    path = layout.log(services.compute(host).name)
    return path.stat().st_size if path.exists() else 0


def compute_log_since(host, offset):
    with open(layout.log(services.compute(host).name), 'rb') as log_file:
        log_file.seek(offset)
        return log_file.read().decode(errors='replace')


def paused_for_copy(log_text, server_id):
    """Whether nova-compute's log `log_text` shows the server's guest
    paused for the copy of a read-only disk.
    """
    return any(PAUSED_FOR_COPY in line and f'[instance: {server_id}]' in line
               for line in log_text.splitlines())


def swap(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[3]
    volume_id = attach_new_volume(tracker, server_id, 'swapped', 'ro')
    before = probes.pool_of(cloud.rbd_image(volume_id))
    host = hosts.by_name(cloud.host_of(server_id))
    log_offset = compute_log_size(host)
    # The guest runs throughout and writes below its kernel every round:
    # QEMU 7.2 aborts on a guest write to a read-only disk during a block
    # mirror unless Nova pauses the guest for the copy (doc/source/
    # cloud.rst). check_views() below shows QEMU and the guest alive.
    cloud.retype(volume_id, content.OTHER_POOL_TYPE)
    cloud.wait_server(server_id)
    check(paused_for_copy(compute_log_since(host, log_offset), server_id),
          f'nova-compute on {host.name} did not pause {server_id} for the '
          'copy of its read-only disk')
    # The copy writes the new image; the guest's slot in it must
    # still be what the guest found (it never wrote it).
    tracker.written[volume_id][1] = tracker.written[volume_id][1] or 'copy'
    after = probes.pool_of(cloud.rbd_image(volume_id))
    check(after != before, f'the volume is still in the pool {before}')
    mode = cloud.attached(server_id, volume_id)['attach_mode']
    check(mode == 'ro', f'after the swap Nova shows {mode}')
    records = [(record['instance'], record['attach_mode']) for record
               in cloud.cinder_attachments(volume_id)]
    check(records == [(server_id, 'ro')],
          f"Cinder's attachments after the swap: {records}")
    return (f'ro volume of a running, writing guest retyped, moved by '
            f'Cinder from pool {before} to {after} through Nova\'s swap '
            'volume, the guest paused by Nova for the copy; Nova and Cinder '
            'show ro; ' + attachment_checks.check_views(
                tracker, [server_id], guest_restart='kept'))


def reattach(tracker):
    changes = ((tracker.servers[1], tracker.volumes['live-rw'], 'ro'),
               (tracker.servers[3], tracker.volumes['swapped'], 'rw'))
    for server_id, volume_id, mode in changes:
        tracker.detach(server_id, volume_id)
        tracker.attach(server_id, volume_id, mode)
    attachment_checks.check_views(
        tracker, [server_id for server_id, _, _ in changes],
        guest_restart='kept')
    return ('detached and re-attached in the other mode: rw -> ro and '
            'ro -> rw, checked')


def shelve(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[0]
    source = cloud.host_of(server_id)
    destination = tracker.other_host(server_id)
    cloud.action(server_id, {'shelve': None})
    cloud.wait_server(server_id, ('SHELVED_OFFLOADED',))
    cloud.action(server_id, {'unshelve': {'host': destination}},
                 admin=True)
    cloud.wait_server(server_id, host=destination)
    tracker.placed(server_id, destination)
    return (f'shelve-offloaded from {source}, unshelved onto '
            f'{destination}: ' + attachment_checks.check_views(
                tracker, [server_id], guest_restart='restarted'))


def evacuate_servers(tracker, evacuated, target):
    """Evacuate the servers to `target`, start them there, and check
    them (check_views()): its detail.
    """
    cloud = tracker.cloud
    for server_id in evacuated:
        cloud.action(server_id, {'evacuate': {'host': target}},
                     admin=True, expect=200)
    for server_id in evacuated:
        # From 2.95 an evacuated server stays stopped.
        cloud.wait_server(server_id, ('SHUTOFF',), host=target)
        cloud.action(server_id, {'os-start': None})
    for server_id in evacuated:
        cloud.wait_server(server_id, host=target)
        tracker.placed(server_id, target)
    return attachment_checks.check_views(tracker, evacuated,
                                         guest_restart='restarted')


def evacuate(tracker):
    cloud = tracker.cloud
    failed = hosts.by_name(cloud.host_of(tracker.servers[1]))
    target = next(host.name for host in hosts.HOSTS if host != failed)
    evacuated = [server for server, host in tracker.placements().items()
                 if host == failed.name]
    compute = services.compute(failed)
    compute.stop()
    try:
        # The host loses power: its guests die with it.
        for domain in hosts.domains(failed, check=True):
            hosts.virsh(failed, 'destroy', domain, check=False)
        # As an operator who fenced the host: forced down at once, not
        # after the missed heartbeats (service_down_time).
        cloud.force_down(failed.name, True)
        detail = evacuate_servers(tracker, evacuated, target)
    except BaseException:
        # The host comes back all the same, so that the steps after this
        # one find both hosts: the forced down lifted first (a service
        # forced down never reports up), then nova-compute started.
        cloud.force_down(failed.name, False)
        services.start(compute, timeout=180, admin=cloud.admin)
        raise
    # The host is back: its nova-compute starts and removes what it
    # had of the evacuated servers (their migrations go from done to
    # completed); then the operator lifts the forced down.
    compute.start()
    rest.wait(f'the evacuations from {failed.name} completed', lambda: {
        migration['status'] for migration in cloud.admin.get(
            'nova-api', '/os-migrations?migration_type=evacuation'
            f'&source_compute={failed.name}',
            microversion='2.80')['migrations']} == {'completed'},
        attachment_checks.GUEST_SECONDS)
    cloud.force_down(failed.name, False)
    services.start(compute, timeout=180, admin=cloud.admin)
    left = [domain for domain in hosts.domains(failed, check=True)
            if any(tracker.report.servers[server]['domain'] == domain
                   for server in evacuated)]
    check(not left, f'{failed.name} kept the domains {left} of the '
          'evacuated servers after its nova-compute came back')
    return (f'{failed.name} down (nova-compute stopped, guests '
            f'destroyed, forced down), {len(evacuated)} servers '
            f'evacuated to {target}: {detail}; {failed.name} back, its '
            'stale domains removed')
