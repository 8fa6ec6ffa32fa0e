"""Multi-create from one multiattach volume, and the cost of an attach mode.

Runs on Nova's in-process functional stack (API over the WSGI test client,
conductor, scheduler with real placement, fake compute driver, SQLite,
CinderFixture) of the patched work tree and prints:

(a) wall time of one POST /servers creating N servers (min_count=N) from
    one multiattach volume until all are ACTIVE, against N serial
    single-server requests (each waited for before the next, as a client
    must when every reservation of the volume has to finish before the
    next); target ratio <= 0.5. Measured twice: with the fake driver's
    instant spawn, where every service shares one interpreter and only
    the per-request API, scheduler and conductor work can be saved; and
    with a guest spawn modelled as SPAWN_SECONDS of waiting (image copy,
    guest start), which concurrent builds overlap as on real computes.
(b) Cinder calls per server in that multi-create, for several N: target
    exactly 1 attachment create, 1 update and 1 complete per server, and a
    number of volume GETs per server that does not grow with N.
(c) database queries issued by one volume attach (from the POST until
    the attachment is shown), at 2.104 and at 2.105 (rw and ro), median of
    REPEATS; target: 2.105 at most 1 more than 2.104. Transactions are
    counted apart: on SQLite oslo.db issues an explicit BEGIN for each,
    which MySQL and PostgreSQL do not send as a statement.

Run with: tools/series bench nova multiattach_multi_create [N]
"""

import collections
import statistics
import sys
import time
import unittest

import fixtures
import sqlalchemy as sa

from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import integrated_helpers
from nova.virt import fake

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20
REPEATS = 5
COMPUTES = 10
SPAWN_SECONDS = 1.0
CINDER_CALLS = ('get', 'attachment_create', 'attachment_update',
                'attachment_complete')


class Benchmark(integrated_helpers._IntegratedTestBase):
    microversion = '2.105'
    # Casts stay casts, as in a deployment: the API returns once the
    # conductor has the request, and the compute builds concurrently.
    CAST_AS_CALL = False

    def setUp(self):
        self.useFixture(nova_fixtures.AllServicesCurrent())
        super().setUp()
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        self.calls = collections.Counter()
        self.spawn_seconds = 0
        spawn = fake.FakeDriver.spawn

        def spawn_with_boot_time(driver, *args, **kwargs):
            time.sleep(self.spawn_seconds)
            return spawn(driver, *args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.FakeDriver.spawn', spawn_with_boot_time))
        for name in CINDER_CALLS:
            self._count('nova.volume.cinder.API.' + name, name)
        # Cinder with the companion series: reservations of a multiattach
        # volume overlap (and its volume API signals it with 3.72).
        self.cinder.multiattach_reservations_overlap = True

    def _setup_compute_service(self):
        # Servers spread over several hosts, as in a cluster: nova-compute
        # reads every instance's allocation from placement on each claim,
        # so N servers on one host would measure that O(N^2), not the API.
        for index in range(COMPUTES):
            self._start_compute(f'compute{index}')

    def _count(self, target, name):
        patched = self.useFixture(
            fixtures.MockPatch(target, autospec=False)).mock
        # MockPatch replaced the fixture's own mock: keep its behaviour.
        fake = getattr(self.cinder, 'fake_' + name)

        def counted(*args, **kwargs):
            self.calls[name] += 1
            return fake(*args, **kwargs)
        patched.side_effect = counted

    def _request(self, count):
        create_req = self._build_server(networks='none')
        if count > 1:
            create_req['min_count'] = count
        create_req['block_device_mapping_v2'] = [{
            'uuid': create_req['imageRef'], 'source_type': 'image',
            'destination_type': 'local', 'boot_index': 0,
        }, {
            'uuid': nova_fixtures.CinderFixture.MULTIATTACH_VOL,
            'source_type': 'volume', 'destination_type': 'volume',
            'boot_index': -1, 'attach_mode': 'ro',
        }]
        return {'server': create_req}

    def _wait_all_active(self, count):
        # Wait for the computes' instance.create.end notifications rather
        # than polling the API: in this one process a poll takes CPU from
        # the builds it waits for.
        self.notifier.wait_for_versioned_notifications(
            'instance.create.end', n_events=count, timeout=300)
        self.notifier.reset()

    def _assert_all_active(self, count):
        servers = self.api.get_servers(detail=True)
        self.assertEqual(['ACTIVE'] * count, [s['status'] for s in servers])

    def _delete_all(self):
        for server in self.api.get_servers():
            self._delete_server(server)

    def multi_create(self, count):
        self.calls.clear()
        start = time.monotonic()
        self.api.post_server(self._request(count))
        self._wait_all_active(count)
        elapsed = time.monotonic() - start
        self._assert_all_active(count)
        calls = dict(self.calls)
        self._delete_all()
        return elapsed, calls

    def serial_create(self, count):
        start = time.monotonic()
        for _ in range(count):
            self.api.post_server(self._request(1))
            self._wait_all_active(1)
        elapsed = time.monotonic() - start
        self._assert_all_active(count)
        self._delete_all()
        return elapsed

    def attach_queries(self, microversion, attach_mode):
        server = self._create_server(networks='none')
        volume_id = nova_fixtures.CinderFixture.MULTIATTACH_VOL
        body = {'volumeAttachment': {'volumeId': volume_id}}
        if attach_mode:
            body['volumeAttachment']['attach_mode'] = attach_mode
        queries = []
        transactions = []

        def count(conn, cursor, statement, *args):
            if statement.strip().upper() == 'BEGIN':
                transactions.append(statement)
            else:
                queries.append(statement)
        sa.event.listen(sa.engine.Engine, 'before_cursor_execute', count)
        try:
            self.api.microversion = microversion
            self.api.api_post(
                '/servers/%s/os-volume_attachments' % server['id'], body,
                check_response_status=[202])
            self._wait_for_volume_attach(server['id'], volume_id)
        finally:
            sa.event.remove(sa.engine.Engine, 'before_cursor_execute', count)
            self.api.microversion = self.microversion
        self._delete_server(server)
        return len(queries), len(transactions)

    def test_benchmark(self):
        print(f'\n(a) {N} servers from one multiattach volume, wall time')
        print(f'    guest spawn  one request  {N} serial requests  ratio')
        self.multi_create(2)  # warm up the stack
        for self.spawn_seconds in (0, SPAWN_SECONDS):
            multi, _ = self.multi_create(N)
            serial = self.serial_create(N)
            print(f'    {self.spawn_seconds:>9.1f} s {multi:>10.2f} s '
                  f'{serial:>17.2f} s  {multi / serial:>5.2f}')
        self.spawn_seconds = 0
        print('    (target: ratio <= 0.5)')

        print('\n(b) Cinder calls per server in one multi-create')
        print('    N   ' + ''.join(f'{name:>22}' for name in CINDER_CALLS))
        for count in sorted({1, 5, N}):
            _, calls = self.multi_create(count)
            print(f'    {count:<4}' + ''.join(
                f'{calls.get(name, 0) / count:>22.2f}'
                for name in CINDER_CALLS))
        print('    (get: one by nova-api for the request, one by nova-compute '
              'per server)')

        print('\n(c) database queries for one volume attach '
              f'(median of {REPEATS})')
        print('    request    queries  transactions')
        # Casts as calls from here on: the POST returns once the attach is
        # done, so no polling is counted.
        self.useFixture(nova_fixtures.CastAsCallFixture(self))
        queries = {}
        for label, microversion, mode in (('2.104', '2.104', None),
                                          ('2.105 rw', '2.105', 'rw'),
                                          ('2.105 ro', '2.105', 'ro')):
            runs = [self.attach_queries(microversion, mode)
                    for _ in range(REPEATS)]
            queries[label] = statistics.median(q for q, _ in runs)
            transactions = statistics.median(t for _, t in runs)
            print(f'    {label:<9} {queries[label]:>8.0f} '
                  f'{transactions:>13.0f}')
        base = queries['2.104']
        print(f'    extra queries at 2.105: '
              f'rw {queries["2.105 rw"] - base:+.0f}, '
              f'ro {queries["2.105 ro"] - base:+.0f} (target <= +1)')


if __name__ == '__main__':
    suite = unittest.TestLoader().loadTestsFromTestCase(Benchmark)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(
        suite)
    sys.exit(0 if result.wasSuccessful() else 1)
