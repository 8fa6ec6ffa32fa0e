"""The attach_mode migration is O(1): a metadata-only ALTER, no backfill.

For MariaDB and PostgreSQL on 127.0.0.1 (the openstack_citest account made
by tools/setup-test-host) and for each row count N: create an empty
database, build Nova's main schema up to the revision before the
attach_mode migration, fill block_device_mapping with N realistic rows (two
per instance: a root volume with its connection_info and a local swap
disk), then time only the attach_mode migration, as `nova-manage db sync`
would run it. The migration runs seven times per N (between runs the
columns are dropped and the alembic version put back) and the median is
reported. Prints, per engine, the times and the ratio of each N's time to
the smallest N's; the target for 1,000,000 against 1,000 rows is <= 1.5.

A table rewrite or a backfill would make the time grow with N (seconds for
a million rows). A metadata-only ALTER does not; what remains is constant:
alembic's own overhead and, on MariaDB, InnoDB re-sampling the index
statistics after the ALTER (a fixed number of pages once the table spans
more than a few).

Run with: tools/series bench nova bdm_attach_mode_migration [N ...]
"""

import statistics
import sys
import time

from alembic import command as alembic_api
from alembic import script as alembic_script
import sqlalchemy as sa

from nova.db import migration

CITEST = 'openstack_citest'
DATABASE = 'bench_attach_mode'
SERVERS = {
    'mariadb': f'mysql+pymysql://{CITEST}:{CITEST}@127.0.0.1/{{db}}'
               '?charset=utf8',
    'postgresql': f'postgresql+psycopg2://{CITEST}:{CITEST}@127.0.0.1/{{db}}',
}
REPEATS = 7
TARGET_RATIO = 1.5

CONNECTION_INFO = (
    '{"driver_volume_type": "iscsi", "data": {"target_discovered": false, '
    '"target_iqn": "iqn.2010-10.org.openstack:volume-0d5f4b8c-2c1e-4f6e-'
    '9f3a-7c1b2d3e4f50", "target_portal": "192.0.2.10:3260", '
    '"target_lun": 1, "volume_id": "0d5f4b8c-2c1e-4f6e-9f3a-7c1b2d3e4f50", '
    '"auth_method": "CHAP", "auth_username": "Xq7Ue9bT4kLm2Np5", '
    '"auth_password": "***", "encrypted": false, "qos_specs": null, '
    '"access_mode": "rw", "cacheable": false}, "serial": '
    '"0d5f4b8c-2c1e-4f6e-9f3a-7c1b2d3e4f50", "multiattach": false}')

# Server-side row generators: a series of integers and a fresh UUID.
SERIES = {'mariadb': 'SELECT seq AS n FROM seq_1_to_{count}',
          'postgresql': 'SELECT n FROM generate_series(1, {count}) AS n'}
NEW_UUID = {'mariadb': 'UUID()', 'postgresql': 'gen_random_uuid()::text'}
NOW = 'CURRENT_TIMESTAMP'


def attach_mode_revision(config):
    """Return (revision, down_revision) of the migration adding the column."""
    scripts = alembic_script.ScriptDirectory.from_config(config)
    for rev in scripts.walk_revisions():
        if 'attach_mode' in rev.module.__file__:
            return rev.revision, rev.down_revision
    sys.exit('no attach_mode migration in this tree: apply the series')


def recreate_database(engine_name):
    admin = sa.create_engine(SERVERS[engine_name].format(db=CITEST),
                             isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS {DATABASE}'))
        conn.execute(sa.text(f'CREATE DATABASE {DATABASE}'))
    admin.dispose()
    return sa.create_engine(SERVERS[engine_name].format(db=DATABASE))


def upgrade(engine, config, revision):
    with engine.begin() as connection:
        config.attributes['connection'] = connection
        alembic_api.upgrade(config, revision)


def fill(engine, engine_name, rows):
    instances = rows // 2
    series = SERIES[engine_name].format(count=instances)
    new_uuid = NEW_UUID[engine_name]
    with engine.begin() as conn:
        conn.execute(sa.text(
            'INSERT INTO instances (uuid, created_at, deleted, vm_state, '
            f"power_state, host, node) SELECT {new_uuid}, {NOW}, 0, 'active', "
            f"1, 'compute-1', 'compute-1' FROM ({series}) AS s"))
        conn.execute(sa.text(
            'INSERT INTO block_device_mapping (created_at, deleted, uuid, '
            'instance_uuid, source_type, destination_type, device_type, '
            'disk_bus, boot_index, device_name, delete_on_termination, '
            'volume_id, volume_size, attachment_id, connection_info, '
            f'no_device, encrypted) SELECT {NOW}, 0, {new_uuid}, uuid, '
            "'volume', 'volume', 'disk', 'virtio', 0, '/dev/vda', "
            f'false, {new_uuid}, 20, {new_uuid}, :info, false, false '
            'FROM instances'), {'info': CONNECTION_INFO})
        conn.execute(sa.text(
            'INSERT INTO block_device_mapping (created_at, deleted, uuid, '
            'instance_uuid, source_type, destination_type, device_type, '
            'guest_format, boot_index, device_name, delete_on_termination, '
            f'volume_size, no_device, encrypted) SELECT {NOW}, 0, '
            f"{new_uuid}, uuid, 'blank', 'local', 'disk', 'swap', -1, "
            "'/dev/vdb', true, 1, false, false FROM instances"))
        count = conn.execute(sa.text(
            'SELECT COUNT(*) FROM block_device_mapping')).scalar()
    if engine_name == 'postgresql':
        with engine.connect().execution_options(
                isolation_level='AUTOCOMMIT') as conn:
            conn.execute(sa.text('VACUUM ANALYZE block_device_mapping'))
    return count


def settle(engine, engine_name):
    """Write back what the fill left behind before timing the migration.

    Right after inserting a million rows MariaDB is still purging undo
    history and flushing dirty pages; a migration timed then measures that
    background I/O, which an operator upgrading a settled database does not
    see. FLUSH TABLES ... FOR EXPORT waits for both, for these tables.
    PostgreSQL was vacuumed by fill().
    """
    if engine_name != 'mariadb':
        return
    with engine.connect().execution_options(
            isolation_level='AUTOCOMMIT') as conn:
        conn.execute(sa.text('FLUSH TABLES block_device_mapping, '
                             'shadow_block_device_mapping FOR EXPORT'))
        conn.execute(sa.text('UNLOCK TABLES'))


def undo(engine, before):
    with engine.begin() as conn:
        for table in ('block_device_mapping', 'shadow_block_device_mapping'):
            conn.execute(sa.text(f'ALTER TABLE {table} DROP COLUMN '
                                 'attach_mode'))
        conn.execute(sa.text('UPDATE alembic_version SET version_num = '
                             ':before'), {'before': before})


def verify(engine, rows):
    with engine.connect() as conn:
        columns = {c['name']: c for c in
                   sa.inspect(conn).get_columns('block_device_mapping')}
        stored = conn.execute(sa.text(
            'SELECT COUNT(*) FROM block_device_mapping '
            'WHERE attach_mode IS NOT NULL')).scalar()
    column = columns['attach_mode']
    assert column['nullable'], column
    assert stored == 0, f'{stored} rows were backfilled'
    assert rows > 0


def measure(engine_name, rows, config, revision, before):
    engine = recreate_database(engine_name)
    upgrade(engine, config, before)
    started = time.monotonic()
    count = fill(engine, engine_name, rows)
    settle(engine, engine_name)
    fill_time = time.monotonic() - started
    times = []
    for repeat in range(REPEATS):
        if repeat:
            undo(engine, before)
        started = time.monotonic()
        upgrade(engine, config, revision)
        times.append(time.monotonic() - started)
        verify(engine, count)
    engine.dispose()
    return count, fill_time, times


def main(argv):
    counts = [int(arg) for arg in argv] or [1_000, 10_000, 1_000_000]
    config = migration._find_alembic_conf('main')
    revision, before = attach_mode_revision(config)
    print(f'attach_mode migration {revision} (after {before}); median of '
          f'{REPEATS} runs per size')
    print(f'{"engine":<11} {"rows":>10} {"fill (s)":>9} '
          f'{"migration (s)":>14}  runs (s)')
    verdicts = []
    for engine_name in SERVERS:
        medians = []
        for rows in counts:
            count, fill_time, times = measure(engine_name, rows, config,
                                              revision, before)
            medians.append(statistics.median(times))
            print(f'{engine_name:<11} {count:>10,} {fill_time:>9.1f} '
                  f'{medians[-1]:>14.3f}  '
                  + ' '.join(f'{t:.3f}' for t in times), flush=True)
        for rows, median in zip(counts[1:], medians[1:]):
            print(f'{engine_name:<11} ratio {rows:,} / {counts[0]:,} rows: '
                  f'{median / medians[0]:.2f}', flush=True)
        ratio = medians[-1] / medians[0]
        verdict = 'OK' if ratio <= TARGET_RATIO else 'OVER TARGET'
        verdicts.append(verdict)
        print(f'{engine_name:<11} target: {counts[-1]:,} / {counts[0]:,} '
              f'rows <= {TARGET_RATIO}: {verdict}', flush=True)
    return 0 if all(v == 'OK' for v in verdicts) else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
