"""`cloud upgrade`: a rolling upgrade on the real two-host cloud, from
the pristine releases (Nova 34.0.0, Cinder 29.0.0) to the series with
compute host B left behind, then B, then back to the pristine releases
as the packagers' page tells an operator to. Every attachment is checked
as in the scenario (API, libvirt XML, QEMU, guest, RBD image) after each
change; each refusal is recorded with its status and body. Writes
.work/cloud/upgrade.json. When every phase passed, the whole cloud goes
back onto the series at once, as `cloud up` would leave it, for
`cloud scenario` to run on.
"""

import time

from series.cloud import api
from series.cloud.client import check
from series.cloud.client import Cloud
from series.cloud import deploy
from series.cloud import hosts
from series.cloud import layout
from series.cloud import releases
from series.cloud import scenario
from series.cloud import services
from series import config
from series import process

# What nova-api answers a read-only request while a compute it involves is
# older than service version 75 (ReadOnlyAttachSupportNotYetAvailable).
NOT_YET_UPGRADED = ('Read-only volume attachments are not supported until '
                    'the compute services involved are upgraded.')

PHASES = 5
OLD = '2.104'
NEW = '2.105'
HOST_A, HOST_B = hosts.HOSTS
# Stopped, upgraded and started together with host A's nova-compute, as
# grenade does on its controller.
CONTROL_SERVICES = ('nova-api', 'nova-conductor', 'nova-scheduler',
                    'cinder-api', 'cinder-scheduler', 'cinder-volume')
CELL_DATABASES = ('mae_nova', 'mae_nova_cell0')
# The packagers' page, "Upgrades and numbering": what an operator runs in
# each cell database, then in the API database, before starting a
# release without the series.
ROLLBACK_SQL = """\
ALTER TABLE block_device_mapping DROP COLUMN attach_mode;
ALTER TABLE shadow_block_device_mapping DROP COLUMN attach_mode;
UPDATE alembic_version SET version_num = 'ab450ba04102';
UPDATE services SET version = 74 WHERE version > 74;"""
API_ROLLBACK_SQL = """\
UPDATE request_specs
    SET spec = JSON_SET(spec, '$."nova_object.version"', '1.15')
    WHERE JSON_UNQUOTE(JSON_EXTRACT(spec, '$."nova_object.version"'))
        IN ('1.16', '1.17');"""
API_DATABASE = 'mae_nova_api'
REQUEST_SPEC_VERSIONS = (
    "SELECT JSON_UNQUOTE(JSON_EXTRACT(spec, '$.\"nova_object.version\"')) "
    "AS version, COUNT(*) FROM request_specs GROUP BY version")
READ_ONLY_BDMS = ("SELECT instance_uuid, volume_id FROM block_device_mapping "
                  "WHERE attach_mode = 'ro' AND deleted = 0")


def say(message):
    process.say(f'upgrade: {message}')


def query(database, sql):
    """The rows of `sql` as lists of strings (NULL as None)."""
    output = process.run(['mariadb', '--protocol=socket', '-u', 'root',
                          '-N', '-B', '-e', sql, database]).stdout
    return [[None if field == 'NULL' else field
             for field in line.split('\t')]
            for line in output.splitlines()]


def columns(database, table):
    return [row[0] for row in query(database, f'SHOW COLUMNS FROM {table}')]


def alembic_head(database='mae_nova'):
    return query(database, 'SELECT version_num FROM alembic_version')[0][0]


def mode_columns():
    """{database.table: whether it has attach_mode} of the cell
    databases' block device mapping tables.
    """
    return {f'{database}.{table}': 'attach_mode' in columns(database, table)
            for database in CELL_DATABASES
            for table in ('block_device_mapping',
                          'shadow_block_device_mapping')}


def series_state():
    """What says the cloud's databases and computes are on the series."""
    return {'attach_mode columns': mode_columns(),
            'alembic': alembic_head(),
            'compute versions': {host: int(version) for host, version in query(
                'mae_nova', "SELECT host, version FROM services WHERE "
                "`binary` = 'nova-compute' AND deleted = 0")}}


def series_problems(state, series_head):
    """What in series_state() says the cloud is not on the series whose
    alembic head is `series_head`.
    """
    problems = [f'{table} has no attach_mode' for table, present
                in state['attach_mode columns'].items() if not present]
    if state['alembic'] != series_head:
        problems.append(f'alembic head {state["alembic"]}, not the '
                        f"series' {series_head}")
    wanted = {host.name: 75 for host in hosts.HOSTS}
    if state['compute versions'] != wanted:
        problems.append(f'nova-compute service versions '
                        f'{state["compute versions"]}, not {wanted}')
    return problems


class Upgrade(scenario.Scenario):

    # Its phases check each attachment through views(); the ledger's
    # comparison with Nova, Cinder and libvirt is the scenario's.
    RECONCILED = False

    def __init__(self):
        super().__init__(Cloud(microversion=OLD))
        self.report = dict(self.report, versions={}, refusals=[],
                           database={}, phases=[])
        # The shelved-offloaded server, and its root volume with the slot
        # region read before it booted.
        self.shelved = None
        self.shelved_root = None
        # {server: its disks} as the API listed them before the upgrade.
        self.before_upgrade = None

    # Bookkeeping

    def phase(self, number, title, function):
        """A phase is a scenario step; the services' versions after it.
        It passes only if each running Nova and Cinder service runs the
        release of its part (running_problems()).
        """
        def checked():
            detail = function()
            running = running_releases()
            self.report.setdefault('running', {})[str(number)] = running
            problems = running_problems(running)
            check(not problems, '; '.join(problems))
            return detail
        passed = self.step(number, title, checked)
        self.report['versions'][str(number)] = self.versions()
        return passed

    def versions(self):
        """What the cloud says of its services: os-services, and the
        versions in Nova's and Cinder's service tables.
        """
        listed = self.cloud.admin.get('nova-api', '/os-services',
                                      microversion=self.cloud.microversion)[
                                          'services']
        nova = query('mae_nova', 'SELECT host, `binary`, version FROM '
                     'services WHERE deleted = 0 ORDER BY host, `binary`')
        cinder = query('mae_cinder', 'SELECT host, `binary`, '
                       'rpc_current_version, object_current_version FROM '
                       'services WHERE deleted = 0 ORDER BY host, `binary`')
        parts = (releases.CONTROL, HOST_A.name, HOST_B.name)
        compute_api = self.cloud.member.get('nova-api', '/')['version']
        return {
            'releases': {part: releases.release_of(part) for part in parts},
            'imported from': {part: releases.imported_from(part)
                              for part in parts},
            'compute API maximum': compute_api['version'],
            'os-services': [
                {key: entry[key] for key in ('host', 'binary', 'state',
                                             'status', 'forced_down')}
                for entry in listed],
            'nova_services': [dict(zip(('host', 'binary', 'version'), row))
                              for row in nova],
            'cinder_services': [dict(zip(('host', 'binary', 'rpc', 'objects'),
                                         row)) for row in cinder]}

    def compute_versions(self, wanted=None):
        """{host: service version} of the nova-computes; with `wanted`,
        once they are that (a restarted service writes its version when
        it starts, and looks up from its last report until then).
        """
        def versions():
            return {host: int(version) for host, binary, version in query(
                'mae_nova', "SELECT host, `binary`, version FROM services "
                "WHERE `binary` = 'nova-compute' AND deleted = 0")}
        if wanted:
            api.wait(f'nova-compute service versions {wanted}',
                     lambda: versions() == wanted, 120)
        return versions()

    def disks(self):
        """{server: sorted (volume, device)} as the API lists them."""
        return {server_id: sorted(
            (attachment['volumeId'], attachment['device'])
            for attachment in self.cloud.attachments(server_id))
            for server_id in self.servers}

    def refused(self, name, reply, status=409, message=NOT_YET_UPGRADED):
        """`reply` must be `status` saying `message` (the series' refusal,
        not another 409 such as a locked server's).
        """
        self.report['refusals'].append({
            'phase': self.current_step, 'request': name,
            'status': reply.status, 'body': reply.body})
        check(reply.status == status and message in reply.text,
              f'{name}: expected {status} saying {message!r}, got '
              f'{reply.status} {reply.text[:300]}')
        return f'{name}: {reply.status}'

    def unchanged(self, before, name):
        check(self.snapshot() == before, f'{name}: something was left behind')

    def attach_pre_series(self, server_id, volume_id):
        """Attach without a mode (the pristine API has none): rw. At 2.104
        the API shows no mode; at 2.105 it shows rw (checked after the
        upgrade).
        """
        region = self.slot_region(volume_id)
        self.cloud.attach(server_id, volume_id)
        self.expect(server_id, volume_id, 'rw', region)
        self.ledger.requested[server_id, volume_id] = None

    def boot(self, name, host=None):
        """A server booted from a new volume made from the guest image."""
        root = self.new_volume(f'{name}-root', multiattach=False,
                               image=self.cloud.image())
        region = self.slot_region(root)
        reply = self.cloud.create_servers(name, [{
            'boot_index': 0, 'uuid': root, 'source_type': 'volume',
            'destination_type': 'volume'}], host=host)
        [server_id] = self.cloud.reserved(reply)
        self.cloud.wait_server(server_id, host=host)
        return server_id, root, region

    def live_migrate(self, server_id, hosts_in_order):
        for host in hosts_in_order:
            self.cloud.action(server_id, {'os-migrateLive': {
                'host': host.name, 'block_migration': 'auto'}}, admin=True)
            self.cloud.wait_server(server_id, host=host.name)
            self.views([server_id])
        return f'{" -> ".join(host.name for host in hosts_in_order)}'

    def start(self, names):
        start_services(names, self.cloud.admin)

    def restart(self, names):
        services.stop_all([services.by_name(name) for name in names])
        self.start(names)

    def wait_computes_up(self):
        api.wait('both nova-computes up', lambda: all(
            self.cloud.compute_service(host.name)['state'] == 'up'
            for host in hosts.HOSTS), 180)

    # 1
    def pristine(self):
        versions = self.compute_versions()
        check(set(versions.values()) == {74},
              f'nova-compute service versions {versions}, not 74')
        server_a, root_a, region_a = self.boot('boot-a', HOST_A.name)
        server_b, root_b, region_b = self.boot('boot-b', HOST_B.name)
        self.servers = [server_a, server_b]
        for server_id, root, region in ((server_a, root_a, region_a),
                                        (server_b, root_b, region_b)):
            self.expect(server_id, root, 'rw', region)
            self.ledger.requested[server_id, root] = None
        shared = self.new_volume('shared')
        for server_id in self.servers:
            self.attach_pre_series(server_id, shared)
        plain = self.new_volume('plain', multiattach=False)
        self.attach_pre_series(server_a, plain)
        self.shelved, root, region = self.boot('shelved')
        self.shelved_root = (root, region)
        self.cloud.action(self.shelved, {'shelve': None})
        self.cloud.wait_server(self.shelved, ('SHELVED_OFFLOADED',))
        detail = self.views()
        self.before_upgrade = self.disks()
        return (f'Nova 34.0.0 and Cinder 29.0.0 everywhere (computes at '
                f'service version 74): two servers booted from volumes, one '
                f'on each host, a multiattach volume attached to both, a '
                f'plain volume to the one on {HOST_A.name}, a third '
                f'shelved-offloaded; {detail}')

    # 2
    def upgrade_control(self):
        rows = int(query('mae_nova', 'SELECT COUNT(*) FROM '
                         'block_device_mapping')[0][0])
        check(rows > 0, 'block_device_mapping is empty: db sync would move '
              'no row')
        head_before = alembic_head()
        present = [table for table, has in mode_columns().items() if has]
        check(not present, f'{present} have attach_mode before db sync')
        stopped = [*CONTROL_SERVICES, services.compute(HOST_A).name]
        services.stop_all([services.by_name(name) for name in stopped])
        releases.set_release(releases.CONTROL, releases.SERIES)
        releases.set_release(HOST_A.name, releases.SERIES)
        timings = sync_databases()
        missing = [table for table, has in mode_columns().items() if not has]
        check(not missing, f'{missing} have no attach_mode after db sync')
        head = alembic_head()
        check(head != head_before, f'the alembic head stayed {head}')
        modes = query('mae_nova', 'SELECT DISTINCT attach_mode FROM '
                      'block_device_mapping')
        self.report['database']['upgrade'] = {
            'block_device_mapping rows': rows, 'sync seconds': timings,
            'attach_mode of existing rows': [row[0] for row in modes],
            'alembic before': head_before, 'alembic': head}
        check(modes == [[None]], f'existing rows have attach_mode {modes}')
        self.start(stopped)
        versions = self.compute_versions({HOST_A.name: 75, HOST_B.name: 74})
        self.wait_computes_up()
        self.cloud.microversion = NEW
        for server in self.cloud.servers(f'name={scenario.PREFIX}'):
            if server['id'] in self.servers:
                check(server['status'] == 'ACTIVE',
                      f'{server["id"]} is {server["status"]}')
        check(self.disks() == self.before_upgrade,
              f'the disks changed: {self.disks()}')
        # Rows from before the upgrade have no mode; the API shows the
        # default, which is what Nova 34.0.0 attached them as.
        for key, requested in self.ledger.requested.items():
            if requested is None:
                self.ledger.requested[key] = 'rw'
        detail = self.views()
        return (f'control plane and {HOST_A.name} on the series, '
                f'{HOST_B.name} on 34.0.0 (service versions {versions}); '
                f'db sync on {rows} block device mappings in '
                f'{timings["nova db sync"]}s, their attach_mode NULL, shown '
                f'as rw at {NEW}; {detail}')

    # 3
    def mixed(self):
        server_a, server_b = self.servers
        results = []
        spare = self.new_volume('spare')
        before = self.snapshot()
        for server_id, host in ((server_b, HOST_B), (server_a, HOST_A)):
            name = f'ro attach to the server on {host.name}'
            results.append(self.refused(name, self.cloud.attach(
                server_id, spare, 'ro', expect=None)))
            self.unchanged(before, name)
        root = self.new_volume('multi-root', image=self.cloud.image())
        before = self.snapshot()
        name = 'multi-create of 2 with an ro root'
        results.append(self.refused(name, self.cloud.create_servers(
            'multi', [{'boot_index': 0, 'uuid': root, 'source_type': 'volume',
                       'destination_type': 'volume', 'attach_mode': 'ro'}],
            count=2, expect=None)))
        self.unchanged(before, name)
        for server_id in self.servers:
            self.attach(server_id, spare, 'rw')
        self.views()
        root, region = self.shelved_root
        self.cloud.action(self.shelved, {'unshelve': {'host': HOST_B.name}},
                          admin=True)
        self.cloud.wait_server(self.shelved, host=HOST_B.name)
        self.servers.append(self.shelved)
        self.expect(self.shelved, root, 'rw', region)
        self.views([self.shelved])
        path = self.live_migrate(server_a, (HOST_B, HOST_A))
        return (f'{", ".join(results)}; rw attach on both hosts; the '
                f'shelved server unshelved onto {HOST_B.name}; rw server '
                f'live-migrated {path}')

    # 4
    def upgrade_host_b(self):
        services.compute(HOST_B).stop()
        releases.set_release(HOST_B.name, releases.SERIES)
        self.start([services.compute(HOST_B).name])
        versions = self.compute_versions({HOST_A.name: 75, HOST_B.name: 75})
        # Each caches the compute RPC version cap it computed.
        self.restart(['nova-api', 'nova-conductor', 'nova-scheduler',
                      services.compute(HOST_A).name])
        self.wait_computes_up()
        server_a, server_b = self.servers[:2]
        read_only = self.new_volume('read-only')
        for server_id in (server_a, server_b):
            self.attach(server_id, read_only, 'ro')
        self.views()
        path = self.live_migrate(server_a, (HOST_B, HOST_A))
        return (f'{HOST_B.name} on the series (service versions {versions}); '
                f'ro attach on both hosts; the server with an ro attachment '
                f'live-migrated {path}, read-only on each')

    # 5
    def rollback(self):
        listed = {database: query(database, READ_ONLY_BDMS)
                  for database in CELL_DATABASES}
        self.report['database']['read-only before rollback'] = listed
        for server_id, volume_id in listed['mae_nova']:
            self.detach(server_id, volume_id)
        left = query('mae_nova', READ_ONLY_BDMS)
        check(not left, f'read-only attachments left: {left}')
        nova_services = [service for service in services.all_services()
                         if service.name.startswith('nova-') or
                         service.name.startswith('cinder-')]
        services.stop_all(nova_services)
        saved = query(API_DATABASE, REQUEST_SPEC_VERSIONS)
        for database in CELL_DATABASES:
            query(database, ROLLBACK_SQL)
        query(API_DATABASE, API_ROLLBACK_SQL)
        self.report['database']['rollback'] = {
            'request spec versions before': saved,
            'request spec versions after': query(API_DATABASE,
                                                 REQUEST_SPEC_VERSIONS)}
        for part in (releases.CONTROL, HOST_A.name, HOST_B.name):
            releases.set_release(part, releases.PRISTINE)
        sync_databases()
        self.start([service.name for service in nova_services])
        self.cloud.microversion = OLD
        versions = self.compute_versions({HOST_A.name: 74, HOST_B.name: 74})
        self.wait_computes_up()
        for key in self.ledger.requested:
            self.ledger.requested[key] = None
        for server_id in self.servers:
            server = self.cloud.server(server_id)
            check(server['status'] == 'ACTIVE',
                  f'{server_id} is {server["status"]}')
        detail = self.views()
        path = self.live_migrate(self.servers[0], (HOST_B, HOST_A))
        return (f'{sum(map(len, listed.values()))} read-only attachments '
                'listed and detached, the SQL run in each cell database, '
                f'34.0.0 everywhere (service versions {versions}), db sync '
                f'clean; {detail}; live-migrated {path} on 34.0.0')

    def run(self):
        self.cloud.delete_leftovers()
        phases = [
            (1, 'the pristine releases and a workload', self.pristine),
            (2, f'control plane and {HOST_A.name} upgraded, {HOST_B.name} '
             'left on 34.0.0', self.upgrade_control),
            (3, 'what a cloud with an older compute refuses and still does',
             self.mixed),
            (4, f'{HOST_B.name} upgraded', self.upgrade_host_b),
            (5, 'rollback to the pristine releases', self.rollback),
        ]
        for number, title, function in phases:
            if not self.phase(number, title, function):
                break
        return self.report


def start_pristine():
    """A new cloud of the pristine releases, in place of what a cloud
    that no longer runs left.
    """
    running = [service.name for service in services.all_services()
               if service.pid()]
    if running or deploy.cluster().pid('mon.a'):
        raise config.SeriesError(
            'a cloud is up: the upgrade starts from a new one of the '
            'pristine releases (`tools/series cloud down` first)')
    deploy.down()
    for part in (releases.CONTROL, HOST_A.name, HOST_B.name):
        releases.set_release(part, releases.PRISTINE)
    deploy.up()


def service_parts():
    """{service name: the part whose release it runs} of Nova's and
    Cinder's services.
    """
    parts = {name: releases.CONTROL for name in CONTROL_SERVICES}
    parts.update({services.compute(host).name: host.name
                  for host in hosts.HOSTS})
    return parts


# The service version each release's Nova services write when they start.
SERVICE_VERSIONS = {74: releases.PRISTINE, 75: releases.SERIES}


def written_versions():
    """{(binary, host or None): the service version the running Nova
    service wrote at its start} (the control services' host is left out:
    one of each).
    """
    return {(binary, host if binary == 'nova-compute' else None):
            int(version) for host, binary, version in query(
                'mae_nova', 'SELECT host, `binary`, version FROM services '
                'WHERE deleted = 0')}


def running_releases():
    """{service: {'part', 'pid', 'runs', 'by', 'should'}} of the running
    Nova and Cinder services: the release each process runs, read from
    the process itself (its environment, or, where setproctitle blanked
    it, the service version it wrote when it started), and the release
    of its part.
    """
    running, written = {}, None
    for name, part in service_parts().items():
        service = services.by_name(name)
        pid = service.pid()
        runs = releases.running_release(pid) if pid else None
        by = 'its environment'
        if pid and runs is None and service.reports_as:
            written = written if written is not None else written_versions()
            version = written.get(service.reports_as[1:])
            runs = SERVICE_VERSIONS.get(version)
            by = f'the service version it wrote ({version})'
        running[name] = {'part': part, 'pid': pid, 'runs': runs, 'by': by,
                         'should': releases.release_of(part)}
    return running


def running_problems(running):
    """A service not running, running another release than its part's,
    or whose release its process does not tell.
    """
    def problem(entry):
        if not entry['pid']:
            return 'is not running'
        if entry['runs'] is None:
            return f'does not tell its release ({entry["by"]})'
        return (f'runs {entry["runs"]} ({entry["by"]}), its part '
                f'{entry["part"]} {entry["should"]}')
    return [f'{name} {problem(entry)}'
            for name, entry in sorted(running.items())
            if entry['runs'] != entry['should']]


def sync_databases():
    """Nova's API and cell databases and Cinder's, by the control plane's
    release; {command: seconds}.
    """
    timings = {}
    nova = ('nova-manage', '--config-file',
            services.conf('nova', 'nova.conf'))
    cinder = ('cinder-manage', '--config-file',
              services.conf('cinder', 'cinder.conf'))
    for name, command in (('nova api_db sync', (*nova, 'api_db', 'sync')),
                          ('nova db sync', (*nova, 'db', 'sync')),
                          ('cinder db sync', (*cinder, 'db', 'sync'))):
        started = time.monotonic()
        deploy.manage(*command)
        timings[name] = round(time.monotonic() - started, 1)
    return timings


def report_counts():
    """{host: report_count} of the nova-computes."""
    return {host: int(count) for host, count in query(
        'mae_nova', "SELECT host, report_count FROM services "
        "WHERE `binary` = 'nova-compute' AND deleted = 0")}


def start_services(names, admin):
    """Start the stopped services `names` in order (each built again: its
    environment follows its release), then wait until each nova-compute
    among them has reported its state. A nova-compute reports only once
    it has started (its resource tracker's first audit done, its RPC
    server up); until then it looks up from its last report, and a
    conductor restarted meanwhile loses the replies its start waits for,
    leaving it unable to take a migration.
    """
    before = report_counts()
    for name in names:
        services.start(services.by_name(name), timeout=180, admin=admin)
    started = [host.name for host in hosts.HOSTS
               if services.compute(host).name in names]
    if started:
        api.wait(f'{", ".join(started)} started (a state report each)',
                 lambda: all(report_counts()[host] > before[host]
                             for host in started), 240)


def back_on_the_series(series_head):
    """The whole cloud on the series again, at once (an offline upgrade
    of the rolled-back cloud): Nova's and Cinder's services stopped, every
    part switched, the databases synced, the services started; then
    series_state() must be that of the series (alembic head
    `series_head`). series_state().
    """
    stopped = [service.name for service in services.all_services()
               if service.name.startswith(('nova-', 'cinder-'))]
    services.stop_all([services.by_name(name) for name in stopped])
    for part in (releases.CONTROL, HOST_A.name, HOST_B.name):
        releases.set_release(part, releases.SERIES)
    sync_databases()
    start_services(stopped, deploy.admin_session())
    state = series_state()
    problems = series_problems(state, series_head)
    check(not problems, 'back on the series: ' + '; '.join(problems))
    return state


def run():
    """A new cloud of the pristine releases, the phases, and the cloud
    back on the series if they all passed; the report, whose 'series
    again' says 'ok' or why not (a failed phase leaves the cloud as it
    was, to be looked at).
    """
    started = time.monotonic()
    start_pristine()
    up_seconds = round(time.monotonic() - started, 1)
    report = Upgrade().run()
    report['seconds'] = round(time.monotonic() - started, 1)
    report['up seconds'] = up_seconds
    report['series again'] = 'not tried: a phase failed'
    if passed(report):
        say('every phase passed: the whole cloud back on the series')
        switched = time.monotonic()
        try:
            report['series state'] = back_on_the_series(
                report['database']['upgrade']['alembic'])
            report['series again'] = 'ok'
        except Exception as error:  # reported, as a phase's failure is
            report['series again'] = f'{type(error).__name__}: {error}'
        report['series again seconds'] = round(
            time.monotonic() - switched, 1)
    path = layout.directory() / 'upgrade.json'
    deploy.write_json(path, report)
    for step in report['steps']:
        process.say(f'phase {step["step"]} '
                    f'{"passed" if step["passed"] else "FAILED":6} '
                    f'{step["seconds"]:6}s  {step["title"]}')
    for refusal in report['refusals']:
        process.say(f'  refused {refusal["status"]}: {refusal["request"]}')
    failed = [step for step in report['steps'] if not step['passed']]
    say(f'{len(report["steps"]) - len(failed)} of {PHASES} phases passed in '
        f'{report["seconds"]}s; report in {path.relative_to(config.ROOT)}')
    return report


def passed(report):
    return len(report['steps']) == PHASES and all(
        step['passed'] for step in report['steps'])


def main():
    report = run()
    say(f'the cloud back on the series: {report["series again"]}')
    return 0 if passed(report) and report['series again'] == 'ok' else 1
