"""Nova's and Cinder's databases as the rolling upgrade reads and changes
them: the attach_mode columns, the alembic head, the services' versions
and state reports, db sync, and the rollback's SQL.
"""

import time

from series.cloud import hosts
from series.cloud import rest
from series.cloud import services
from series import process

CELL_DATABASES = ('mae_nova', 'mae_nova_cell0')
# The service version Nova 34.0.0's services write, and those of Nova's
# series (75 is compute RPC 6.6, 76 the conductor that makes each
# instance's block device mappings from its build request).
PRISTINE_SERVICE_VERSION = 74
SERIES_SERVICE_VERSION = 76
# The packagers' page, "Upgrades and numbering": what an operator runs in
# each cell database, then in the API database, before starting a
# release without the series.
ROLLBACK_SQL = """\
ALTER TABLE block_device_mapping DROP COLUMN attach_mode;
ALTER TABLE shadow_block_device_mapping DROP COLUMN attach_mode;
UPDATE alembic_version SET version_num = 'ab450ba04102';
UPDATE services SET version = 74 WHERE version > 74;"""
# Not the packagers' SQL: the upgrade's own, after it. The rollback SQL
# sets every version to 74, so the conductor's and the scheduler's rows
# are cleared: the version each writes again when it starts tells the
# release it runs (their environment is blank, see
# series.cloud.upgrade.running_releases).
FORGET_CONTROL_VERSIONS = (
    "UPDATE services SET version = 0 "
    "WHERE `binary` IN ('nova-conductor', 'nova-scheduler')")
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


def series_compute_versions():
    """{host: service version} of every nova-compute on the series."""
    return {host.name: SERIES_SERVICE_VERSION for host in hosts.HOSTS}


def series_problems(state, series_head):
    """What in series_state() says the cloud is not on the series whose
    alembic head is `series_head`.
    """
    problems = [f'{table} has no attach_mode' for table, present
                in state['attach_mode columns'].items() if not present]
    if state['alembic'] != series_head:
        problems.append(f'alembic head {state["alembic"]}, not the '
                        f"series' {series_head}")
    wanted = series_compute_versions()
    if state['compute versions'] != wanted:
        problems.append(f'nova-compute service versions '
                        f'{state["compute versions"]}, not {wanted}')
    return problems


def compute_versions(wanted=None):
    """{host: service version} of the nova-computes; with `wanted`,
    once they are that (a restarted service writes its version when
    it starts, and looks up from its last report until then).
    """
    def versions():
        return {host: int(version) for host, binary, version in query(
            'mae_nova', "SELECT host, `binary`, version FROM services "
            "WHERE `binary` = 'nova-compute' AND deleted = 0")}
    if wanted:
        rest.wait(f'nova-compute service versions {wanted}',
                  lambda: versions() == wanted, 120)
    return versions()


def written_versions():
    """{(binary, host or None): the service version the running Nova
    service wrote at its start} (the control services' host is left out:
    one of each).
    """
    return {(binary, host if binary == 'nova-compute' else None):
            int(version) for host, binary, version in query(
                'mae_nova', 'SELECT host, `binary`, version FROM services '
                'WHERE deleted = 0')}


def report_counts():
    """{host: report_count} of the nova-computes."""
    return {host: int(count) for host, count in query(
        'mae_nova', "SELECT host, report_count FROM services "
        "WHERE `binary` = 'nova-compute' AND deleted = 0")}


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
        services.manage(*command)
        timings[name] = round(time.monotonic() - started, 1)
    return timings
