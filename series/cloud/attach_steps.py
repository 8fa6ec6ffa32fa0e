"""The scenario's steps that create and attach (1, 2, 3), refuse (11)
and read the volumes' whole RBD images (12), each a function of the
tracker that returns the step's detail.
"""

from series.cloud import attachment_checks
from series.cloud.client import check
from series.cloud.client import PREFIX
from series.cloud import hosts
from series.cloud import probes

BEFORE = '2.104'
MULTI_CREATE = 4


def multi_create(tracker):
    cloud = tracker.cloud
    root = tracker.new_volume('root', image=cloud.image())
    region = tracker.slot_region(root)
    bdm = [{'boot_index': 0, 'uuid': root, 'source_type': 'volume',
            'destination_type': 'volume', 'attach_mode': 'ro'}]
    reply = cloud.create_servers('multi', bdm, count=MULTI_CREATE)
    tracker.servers = cloud.reserved(reply)
    check(len(tracker.servers) == MULTI_CREATE,
          f'{len(tracker.servers)} servers of {MULTI_CREATE} created')
    for server_id in tracker.servers:
        cloud.wait_server(server_id)
        tracker.placed(server_id)
        tracker.expect(server_id, root, 'ro', region)
    attachments = cloud.volume(root)['attachments']
    check(sorted(a['server_id'] for a in attachments) == tracker.servers,
          f'Cinder lists {len(attachments)} attachments of the root, '
          'not one per server')
    placed = tracker.placements()
    check(set(placed.values()) == {host.name for host in hosts.HOSTS},
          f'the {MULTI_CREATE} servers are all on '
          f'{", ".join(sorted(set(placed.values())))}')
    per_host = {host.name: list(placed.values()).count(host.name)
                for host in hosts.HOSTS}
    return (f'{MULTI_CREATE} servers ACTIVE from one ro root, one Cinder '
            f'attachment each, on both hosts ({per_host})')


def attach_modes(tracker):
    cloud = tracker.cloud
    data = tracker.new_volume('data')
    # As `openstack server add volume SERVER VOLUME` finds it by name.
    named = cloud.member.get('cinder-api', cloud.volume_path(
        f'/detail?name={PREFIX}-data'))['volumes']
    check([volume['id'] for volume in named] == [data],
          f'the member looking {PREFIX}-data up by name finds '
          f'{[volume["id"] for volume in named]}')
    for server_id, mode in zip(tracker.servers, ('rw', 'ro', 'ro')):
        tracker.attach(server_id, data, mode)
    modes = [cloud.attached(server_id, data)['attach_mode']
             for server_id in tracker.servers[:3]]
    check(modes == ['rw', 'ro', 'ro'], f'GET at 2.105 shows {modes}')
    return ('data volume found by name, attached rw, ro, ro; GET shows '
            'rw, ro, ro; ' + attachment_checks.check_views(tracker))


def readonly_flag(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[0]
    cases = (('flag-false', False, None, 'rw'),
             ('flag-true', True, 'rw', 'ro'))
    for name, flag, mode, effective in cases:
        volume_id = tracker.new_volume(name)
        cloud.admin.call(
            'POST', 'cinder-api', f'/volumes/{volume_id}/action',
            {'os-update_readonly_flag': {'readonly': flag}}, expect=202)
        region = tracker.slot_region(volume_id)
        cloud.attach(server_id, volume_id, mode)
        tracker.expect(server_id, volume_id, effective, region,
                       requested=mode or 'rw')
    attachment_checks.check_views(tracker, [server_id], guest_restart='kept')
    return ('readonly flag False, no mode: writable; flag True, '
            'attached rw: read-only, down to the RBD image')


def refusals(tracker):
    cloud = tracker.cloud
    server_id = tracker.servers[0]
    spare = tracker.new_volume('spare')
    # Bootable: a blank root is refused first for not being bootable.
    single = tracker.new_volume('single', multiattach=False,
                                image=cloud.image())
    before = tracker.snapshot()
    results = []

    def refused(name, reply, message, status=400):
        # The refusal the series makes, not another one with the same
        # code (a locked server's 409, a schema error elsewhere).
        check(reply.status == status and message in reply.text,
              f'{name}: expected {status} saying {message!r}, got '
              f'{reply.status} {reply.text[:200]}')
        check(tracker.snapshot() == before,
              f'{name}: something was left behind')
        results.append(f'{name} {reply.status}')

    refused('attach_mode at 2.104', cloud.attach(
        server_id, spare, 'ro', microversion=BEFORE, expect=None),
        "'attach_mode' was unexpected")
    refused('attach_mode "rx"', cloud.attach(
        server_id, spare, 'rx', expect=None),
        'Invalid input for field/attribute attach_mode')
    # A blank local disk, which Nova takes without the mode (an image
    # to local is refused for another reason without imageRef).
    local = cloud.create_servers(
        'local', [{'boot_index': -1, 'source_type': 'blank',
                   'destination_type': 'local', 'volume_size': 1,
                   'attach_mode': 'ro'}], expect=None)
    refused('local BDM with a mode', local,
            'Specifying an attach_mode is only supported')
    refused('multi-create from a non-multiattach volume',
            cloud.create_servers('single', [{
                'boot_index': 0, 'uuid': single,
                'source_type': 'volume', 'destination_type': 'volume',
                'attach_mode': 'ro'}], count=2, expect=None),
            'only multiattach volumes can be shared')
    # SCSI passthrough: commands that reach the volume below the
    # read-only flag.
    refused('read-only lun', cloud.create_servers('lun', [{
        'boot_index': 0, 'uuid': single, 'source_type': 'volume',
        'destination_type': 'volume', 'device_type': 'lun',
        'disk_bus': 'scsi', 'attach_mode': 'ro'}], expect=None),
        'cannot be attached read-only as a lun device')
    refused('rebuild reimaging the ro root', cloud.action(
        server_id, {'rebuild': {'imageRef': cloud.image()}},
        expect=None), 'the volume is attached read-only', status=409)
    return ', '.join(results)


def images(tracker):
    """Each volume's whole RBD image: unchanged unless something was
    allowed to write it.
    """
    volume_ids = list(tracker.written)
    digests = dict(zip(volume_ids, probes.digests(
        [tracker.cloud.rbd_image(volume_id) for volume_id in volume_ids])))
    problems, names = [], {None: [], 'rw': [], 'copy': []}
    for volume_id, (made, written_by) in tracker.written.items():
        entry = tracker.report.volumes[volume_id]
        entry.update(digest_end=digests[volume_id],
                     written_by=written_by,
                     changed=digests[volume_id] != made)
        names[written_by].append(entry['name'])
        problems += attachment_checks.image_problems(
            entry['name'], volume_id, entry['changed'], written_by)
    check(not problems, '; '.join(problems))
    return (f'never attached rw, RBD image unchanged: '
            f'{", ".join(names[None])}; attached rw, changed: '
            f'{", ".join(names["rw"])}; copied by a migration only: '
            f'{", ".join(names["copy"]) or "none"}')
