"""The rolling upgrade's five phases (series.cloud.upgrade runs them):
the pristine releases with a workload, the control plane and host A on
the series with host B left behind, what that mixed cloud refuses and
still does, host B on the series, and the rollback to the pristine
releases. Each is a function of the Upgrade that returns its detail.
"""

from series.cloud import attachment_checks
from series.cloud.client import check
from series.cloud.client import PREFIX
from series.cloud import databases
from series.cloud import hosts
from series.cloud import releases
from series.cloud import rest
from series.cloud import services
from series.cloud import steps

# What nova-api answers a read-only request while a compute it involves is
# older than service version 75 (ReadOnlyAttachSupportNotYetAvailable).
NOT_YET_UPGRADED = ('Read-only volume attachments are not supported until '
                    'the compute services involved are upgraded.')
# The mode Cinder records for the reservation Nova 34.0.0 makes when it
# shelve-offloads a server (attachment_create without a mode).
NO_MODE = 'null'

OLD = '2.104'
NEW = '2.105'
HOST_A, HOST_B = hosts.HOSTS
# Each with a release of its own.
PARTS = (releases.CONTROL, HOST_A.name, HOST_B.name)
# Stopped, upgraded and started together with host A's nova-compute, as
# grenade does on its controller.
CONTROL_SERVICES = ('nova-api', 'nova-conductor', 'nova-scheduler',
                    'cinder-api', 'cinder-scheduler', 'cinder-volume')


class Upgrade:
    """What the phases share: the tracker, the server shelved-offloaded
    before the upgrade, and every server's disks as the API listed them
    before the upgrade.
    """

    def __init__(self, tracker):
        self.tracker = tracker
        self.shelved = None
        self.before_upgrade = None


def start_services(names, admin):
    """Start the stopped services `names` in order (each built again: its
    environment follows its release), then wait until each nova-compute
    among them has reported its state. A nova-compute reports only once
    it has started (its resource tracker's first audit done, its RPC
    server up); until then it looks up from its last report, and a
    conductor restarted meanwhile loses the replies its start waits for,
    leaving it unable to take a migration.
    """
    before = databases.report_counts()
    for name in names:
        services.start(services.by_name(name), timeout=180, admin=admin)
    started = [host.name for host in hosts.HOSTS
               if services.compute(host).name in names]
    if started:
        rest.wait(f'{", ".join(started)} started (a state report each)',
                  lambda: all(databases.report_counts()[host] > before[host]
                              for host in started), 240)


def restart_services(names, admin):
    services.stop_all([services.by_name(name) for name in names])
    start_services(names, admin)


def wait_computes_up(cloud):
    rest.wait('both nova-computes up', lambda: all(
        cloud.compute_service(host.name)['state'] == 'up'
        for host in hosts.HOSTS), 180)


def disks(tracker):
    """{server: sorted (volume, device)} as the API lists them."""
    return {server_id: sorted(
        (attachment['volumeId'], attachment['device'])
        for attachment in tracker.cloud.attachments(server_id))
        for server_id in tracker.servers}


def refused(tracker, name, reply, status=409, message=NOT_YET_UPGRADED):
    """`reply` must be `status` saying `message` (the series' refusal,
    not another 409 such as a locked server's).
    """
    tracker.report.refusals.append({
        'phase': tracker.current_step, 'request': name,
        'status': reply.status, 'body': reply.body})
    check(reply.status == status and message in reply.text,
          f'{name}: expected {status} saying {message!r}, got '
          f'{reply.status} {reply.text[:300]}')
    return f'{name}: {reply.status}'


def unchanged(tracker, before, name):
    check(tracker.snapshot() == before, f'{name}: something was left behind')


def attach_pre_series(tracker, server_id, volume_id):
    """Attach without a mode (the pristine API has none): rw. At 2.104
    the API shows no mode; at 2.105 it shows rw (checked after the
    upgrade).
    """
    region = tracker.slot_region(volume_id)
    tracker.cloud.attach(server_id, volume_id)
    tracker.expect(server_id, volume_id, 'rw', region)
    tracker.ledger.requested[server_id, volume_id] = None


def boot(tracker, name, host=None):
    """A server booted from a new volume made from the guest image, in
    the ledger with its root volume rw (as Nova 34.0.0 attaches it).
    """
    cloud = tracker.cloud
    root = tracker.new_volume(f'{name}-root', multiattach=False,
                              image=cloud.image())
    region = tracker.slot_region(root)
    reply = cloud.create_servers(name, [{
        'boot_index': 0, 'uuid': root, 'source_type': 'volume',
        'destination_type': 'volume'}], host=host)
    [server_id] = cloud.reserved(reply)
    cloud.wait_server(server_id, host=host)
    tracker.placed(server_id, host)
    tracker.expect(server_id, root, 'rw', region)
    tracker.ledger.requested[server_id, root] = None
    return server_id


def live_migrate(tracker, server_id, hosts_in_order):
    for host in hosts_in_order:
        tracker.cloud.action(server_id, {'os-migrateLive': {
            'host': host.name, 'block_migration': 'auto'}}, admin=True)
        tracker.cloud.wait_server(server_id, host=host.name)
        tracker.placed(server_id, host.name)
        tracker.ledger.records(server_id, migrated_record_mode())
        attachment_checks.check_views(tracker, [server_id], KEPT)
    return f'{" -> ".join(host.name for host in hosts_in_order)}'


def migrated_record_mode():
    """The mode Cinder records of the attachments a live migration makes
    on its destination, where it is not the guest's: Cinder 29.0.0's
    attachment_create with a connector saves the mode it was given (none
    from Nova 34.0.0: 'null') over the one its volume service recorded
    from the connector (LP #1741476, which Cinder's series fixes).
    """
    if releases.release_of(releases.CONTROL) == releases.PRISTINE:
        return NO_MODE
    return None


# The guests run throughout: from control-upgraded on, each check claims
# the boot id its guest had at the last check (a guest not checked before
# is not claimed).
KEPT = 'kept'


def pristine(upgrade):
    tracker = upgrade.tracker
    versions = databases.compute_versions()
    check(set(versions.values()) == {databases.PRISTINE_SERVICE_VERSION},
          f'nova-compute service versions {versions}, not '
          f'{databases.PRISTINE_SERVICE_VERSION}')
    server_a = boot(tracker, 'boot-a', HOST_A.name)
    server_b = boot(tracker, 'boot-b', HOST_B.name)
    tracker.servers = [server_a, server_b]
    shared = tracker.new_volume('shared')
    for server_id in tracker.servers:
        attach_pre_series(tracker, server_id, shared)
    plain = tracker.new_volume('plain', multiattach=False)
    attach_pre_series(tracker, server_a, plain)
    upgrade.shelved = boot(tracker, 'shelved')
    tracker.cloud.action(upgrade.shelved, {'shelve': None})
    tracker.cloud.wait_server(upgrade.shelved, ('SHELVED_OFFLOADED',))
    tracker.ledger.offload(upgrade.shelved, NO_MODE)
    detail = attachment_checks.check_views(tracker)
    upgrade.before_upgrade = disks(tracker)
    return (f'Nova 34.0.0 and Cinder 29.0.0 everywhere (computes at '
            f'service version 74): two servers booted from volumes, one '
            f'on each host, a multiattach volume attached to both, a '
            f'plain volume to the one on {HOST_A.name}, a third '
            f'shelved-offloaded; {detail}')


def upgrade_control(upgrade):
    tracker = upgrade.tracker
    cloud = tracker.cloud
    rows = int(databases.query('mae_nova', 'SELECT COUNT(*) FROM '
                               'block_device_mapping')[0][0])
    check(rows > 0, 'block_device_mapping is empty: db sync would move '
          'no row')
    head_before = databases.alembic_head()
    present = [table for table, has in databases.mode_columns().items()
               if has]
    check(not present, f'{present} have attach_mode before db sync')
    stopped = [*CONTROL_SERVICES, services.compute(HOST_A).name]
    services.stop_all([services.by_name(name) for name in stopped])
    releases.set_release(releases.CONTROL, releases.SERIES)
    releases.set_release(HOST_A.name, releases.SERIES)
    timings = databases.sync_databases()
    missing = [table for table, has in databases.mode_columns().items()
               if not has]
    check(not missing, f'{missing} have no attach_mode after db sync')
    head = databases.alembic_head()
    check(head != head_before, f'the alembic head stayed {head}')
    modes = databases.query('mae_nova', 'SELECT DISTINCT attach_mode FROM '
                            'block_device_mapping')
    tracker.report.database['upgrade'] = {
        'block_device_mapping rows': rows, 'sync seconds': timings,
        'attach_mode of existing rows': [row[0] for row in modes],
        'alembic before': head_before, 'alembic': head}
    check(modes == [[None]], f'existing rows have attach_mode {modes}')
    start_services(stopped, cloud.admin)
    versions = databases.compute_versions({
        HOST_A.name: databases.SERIES_SERVICE_VERSION,
        HOST_B.name: databases.PRISTINE_SERVICE_VERSION})
    wait_computes_up(cloud)
    cloud.microversion = NEW
    for server in cloud.servers(f'name={PREFIX}'):
        if server['id'] in tracker.servers:
            check(server['status'] == 'ACTIVE',
                  f'{server["id"]} is {server["status"]}')
    check(disks(tracker) == upgrade.before_upgrade,
          f'the disks changed: {disks(tracker)}')
    # Rows from before the upgrade have no mode; the API shows the
    # default, which is what Nova 34.0.0 attached them as.
    for key, requested in tracker.ledger.requested.items():
        if requested is None:
            tracker.ledger.requested[key] = 'rw'
    detail = attachment_checks.check_views(tracker, guest_restart=KEPT)
    return (f'control plane and {HOST_A.name} on the series, '
            f'{HOST_B.name} on 34.0.0 (service versions {versions}); '
            f'db sync on {rows} block device mappings in '
            f'{timings["nova db sync"]}s, their attach_mode NULL, shown '
            f'as rw at {NEW}; {detail}')


def mixed(upgrade):
    tracker = upgrade.tracker
    cloud = tracker.cloud
    server_a, server_b = tracker.servers
    results = []
    spare = tracker.new_volume('spare')
    before = tracker.snapshot()
    for server_id, host in ((server_b, HOST_B), (server_a, HOST_A)):
        name = f'ro attach to the server on {host.name}'
        results.append(refused(tracker, name, cloud.attach(
            server_id, spare, 'ro', expect=None)))
        unchanged(tracker, before, name)
    root = tracker.new_volume('multi-root', image=cloud.image())
    before = tracker.snapshot()
    name = 'multi-create of 2 with an ro root'
    results.append(refused(tracker, name, cloud.create_servers(
        'multi', [{'boot_index': 0, 'uuid': root, 'source_type': 'volume',
                   'destination_type': 'volume', 'attach_mode': 'ro'}],
        count=2, expect=None)))
    unchanged(tracker, before, name)
    for server_id in tracker.servers:
        tracker.attach(server_id, spare, 'rw')
    attachment_checks.check_views(tracker, guest_restart=KEPT)
    cloud.action(upgrade.shelved, {'unshelve': {'host': HOST_B.name}},
                 admin=True)
    cloud.wait_server(upgrade.shelved, host=HOST_B.name)
    tracker.placed(upgrade.shelved, HOST_B.name)
    tracker.servers.append(upgrade.shelved)
    attachment_checks.check_views(tracker, [upgrade.shelved])
    path = live_migrate(tracker, server_a, (HOST_B, HOST_A))
    return (f'{", ".join(results)}; rw attach on both hosts; the '
            f'shelved server unshelved onto {HOST_B.name}; rw server '
            f'live-migrated {path}')


def upgrade_host_b(upgrade):
    tracker = upgrade.tracker
    admin = tracker.cloud.admin
    services.compute(HOST_B).stop()
    releases.set_release(HOST_B.name, releases.SERIES)
    start_services([services.compute(HOST_B).name], admin)
    versions = databases.compute_versions(
        databases.series_compute_versions())
    # Each caches the compute RPC version cap it computed.
    restart_services(['nova-api', 'nova-conductor', 'nova-scheduler',
                      services.compute(HOST_A).name], admin)
    wait_computes_up(tracker.cloud)
    server_a, server_b = tracker.servers[:2]
    read_only = tracker.new_volume('read-only')
    for server_id in (server_a, server_b):
        tracker.attach(server_id, read_only, 'ro')
    attachment_checks.check_views(tracker, guest_restart=KEPT)
    path = live_migrate(tracker, server_a, (HOST_B, HOST_A))
    return (f'{HOST_B.name} on the series (service versions {versions}); '
            f'ro attach on both hosts; the server with an ro attachment '
            f'live-migrated {path}, read-only on each')


def rollback(upgrade):
    tracker = upgrade.tracker
    cloud = tracker.cloud
    listed = {database: databases.query(database, databases.READ_ONLY_BDMS)
              for database in databases.CELL_DATABASES}
    tracker.report.database['read-only before rollback'] = listed
    made = sorted(key for key, requested in tracker.ledger.requested.items()
                  if requested == 'ro')
    found = sorted(tuple(row) for rows in listed.values() for row in rows)
    check(found == made, f'the read-only attachments in the databases '
          f'{found}, not the ones the upgrade made {made}')
    for server_id, volume_id in made:
        tracker.detach(server_id, volume_id)
    left = databases.query('mae_nova', databases.READ_ONLY_BDMS)
    check(not left, f'read-only attachments left: {left}')
    nova_services = [service for service in services.all_services()
                     if service.name.startswith('nova-') or
                     service.name.startswith('cinder-')]
    services.stop_all(nova_services)
    saved = databases.query(databases.API_DATABASE,
                            databases.REQUEST_SPEC_VERSIONS)
    for database in databases.CELL_DATABASES:
        databases.query(database, databases.ROLLBACK_SQL)
        databases.query(database, databases.FORGET_CONTROL_VERSIONS)
    databases.query(databases.API_DATABASE, databases.API_ROLLBACK_SQL)
    tracker.report.database['rollback'] = {
        'request spec versions before': saved,
        'request spec versions after': databases.query(
            databases.API_DATABASE, databases.REQUEST_SPEC_VERSIONS)}
    for part in PARTS:
        releases.set_release(part, releases.PRISTINE)
    databases.sync_databases()
    start_services([service.name for service in nova_services], cloud.admin)
    cloud.microversion = OLD
    wait_computes_up(cloud)
    for key in tracker.ledger.requested:
        tracker.ledger.requested[key] = None
    for server_id in tracker.servers:
        server = cloud.server(server_id)
        check(server['status'] == 'ACTIVE',
              f'{server_id} is {server["status"]}')
    detail = attachment_checks.check_views(tracker, guest_restart=KEPT)
    path = live_migrate(tracker, tracker.servers[0], (HOST_B, HOST_A))
    return (f'the {len(made)} read-only attachments the upgrade made, as '
            'the databases listed them, detached; the SQL run in each '
            'cell database; 34.0.0 everywhere (each service\'s release '
            'read from its process, or from the service version it wrote '
            'again after the SQL), db sync clean; '
            f'{detail}; live-migrated {path} on 34.0.0')


PHASES = (
    steps.Step('pristine', 'the pristine releases and a workload', pristine),
    steps.Step('control-upgraded', f'control plane and {HOST_A.name} '
               f'upgraded, {HOST_B.name} left on 34.0.0', upgrade_control,
               needs='pristine'),
    steps.Step('mixed', 'what a cloud with an older compute refuses and '
               'still does', mixed, needs='control-upgraded'),
    steps.Step('host-b-upgraded', f'{HOST_B.name} upgraded', upgrade_host_b,
               needs='mixed'),
    steps.Step('rollback', 'rollback to the pristine releases', rollback,
               needs='host-b-upgraded'),
)
