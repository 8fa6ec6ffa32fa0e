"""Multi-create from one multiattach volume, and the cost of an attach mode.

Runs on Nova's in-process functional stack (API over the WSGI test client,
conductor, scheduler with real placement, fake compute driver, SQLite,
CinderFixture) of the patched work tree and prints:

(a) wall time of one POST /servers creating N servers (min_count=N) from
    one multiattach volume until all are ACTIVE, against N serial
    single-server requests (each waited for before the next); target
    ratio <= 0.5.
(b) Cinder calls per server in that multi-create, for several N: target
    exactly 1 attachment create, 1 update and 1 complete per server, and a
    number of volume GETs per server that does not grow with N.
(c) database statements issued by one volume attach (from the POST until
    the attachment is shown), at 2.104 and at 2.105 (rw and ro), median of
    REPEATS; target: 2.105 at most 1 more than 2.104.

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

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20
REPEATS = 5
CINDER_CALLS = ('get', 'attachment_create', 'attachment_update',
                'attachment_complete')


class Benchmark(integrated_helpers._IntegratedTestBase):
    microversion = '2.105'

    def setUp(self):
        self.useFixture(nova_fixtures.AllServicesCurrent())
        super().setUp()
        self.calls = collections.Counter()
        for name in CINDER_CALLS:
            self._count('nova.volume.cinder.API.' + name, name)

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
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            servers = self.api.get_servers(detail=True)
            if len(servers) == count and all(
                    s['status'] == 'ACTIVE' for s in servers):
                return servers
            if any(s['status'] == 'ERROR' for s in servers):
                self.fail('a server went to ERROR')
            time.sleep(0.05)
        self.fail('servers did not become ACTIVE')

    def _delete_all(self):
        for server in self.api.get_servers():
            self._delete_server(server)

    def multi_create(self, count):
        self.calls.clear()
        start = time.monotonic()
        self.api.post_server(self._request(count))
        self._wait_all_active(count)
        elapsed = time.monotonic() - start
        calls = dict(self.calls)
        self._delete_all()
        return elapsed, calls

    def serial_create(self, count):
        start = time.monotonic()
        for done in range(1, count + 1):
            self.api.post_server(self._request(1))
            self._wait_all_active(done)
        elapsed = time.monotonic() - start
        self._delete_all()
        return elapsed

    def attach_statements(self, microversion, attach_mode):
        server = self._create_server(networks='none')
        volume_id = nova_fixtures.CinderFixture.MULTIATTACH_VOL
        body = {'volumeAttachment': {'volumeId': volume_id}}
        if attach_mode:
            body['volumeAttachment']['attach_mode'] = attach_mode
        statements = []

        def count(*args):
            statements.append(args[2])
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
        return len(statements)

    def test_benchmark(self):
        print(f'\n(a) {N} servers from one multiattach volume')
        self.multi_create(2)  # warm up the stack
        multi, _ = self.multi_create(N)
        serial = self.serial_create(N)
        print(f'    one request (min_count={N}): {multi:.2f} s')
        print(f'    {N} serial requests:          {serial:.2f} s')
        print(f'    ratio: {multi / serial:.2f} (target <= 0.5)')

        print('\n(b) Cinder calls per server in one multi-create')
        print('    N   ' + ''.join(f'{name:>22}' for name in CINDER_CALLS))
        for count in sorted({1, 5, N}):
            _, calls = self.multi_create(count)
            print(f'    {count:<4}' + ''.join(
                f'{calls.get(name, 0) / count:>22.2f}'
                for name in CINDER_CALLS))

        print('\n(c) database statements for one volume attach '
              f'(median of {REPEATS})')
        results = {}
        for label, microversion, mode in (('2.104', '2.104', None),
                                          ('2.105 rw', '2.105', 'rw'),
                                          ('2.105 ro', '2.105', 'ro')):
            results[label] = statistics.median(
                self.attach_statements(microversion, mode)
                for _ in range(REPEATS))
            print(f'    {label:<9} {results[label]:.0f}')
        base = results['2.104']
        print(f'    extra at 2.105: rw {results["2.105 rw"] - base:+.0f}, '
              f'ro {results["2.105 ro"] - base:+.0f} (target <= +1)')


if __name__ == '__main__':
    suite = unittest.TestLoader().loadTestsFromTestCase(Benchmark)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(
        suite)
    sys.exit(0 if result.wasSuccessful() else 1)
