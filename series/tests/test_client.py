"""Tests of series.cloud.client against fake services on this machine:
check(), what wait_server() waits for (status, no task, host) and how
it fails (a server in ERROR, with its fault's last lines), and the slot
each server's guest writes in.
"""

import json
from unittest import mock

from series.cloud import client
from series.cloud import guest
from series.cloud import rest
from series import config
from series.tests import base

SERVER = 'b8c4e0a6-3f36-4a1e-9d1b-6f7d0e2a1c55'


def server(status, task=None, host='mae-compute-a', fault=None):
    return {'id': SERVER, 'status': status, 'OS-EXT-STS:task_state': task,
            'OS-EXT-SRV-ATTR:host': host, 'fault': fault}


class CheckTest(base.RootTestCase):

    def test_check(self):
        client.check(True, 'never raised')
        with self.assertRaisesRegex(client.Failed, 'the reason'):
            client.check(False, 'the reason')


class WaitServerTest(base.RootTestCase):

    def cloud(self, states):
        """A Cloud whose GET /servers/SERVER answers each of `states` in
        turn, then the last one again.
        """
        states = list(states)

        def respond(method, path, body):
            if path.startswith(f'/v2.1/servers/{SERVER}'):
                state = states.pop(0) if len(states) > 1 else states[0]
                return 200, {'server': state}
            return 404, {}
        self.seen = base.fake_services(self, respond)
        self.sleeps = []
        patcher = mock.patch.object(rest.time, 'sleep',
                                    side_effect=self.sleeps.append)
        patcher.start()
        self.addCleanup(patcher.stop)
        return client.Cloud()

    def test_the_status_asked_for_with_no_task_on_the_host(self):
        cloud = self.cloud([server('BUILD'), server('ACTIVE', 'spawning'),
                            server('ACTIVE', host='mae-compute-b'),
                            server('ACTIVE')])
        found = cloud.wait_server(SERVER, host='mae-compute-a', timeout=60)
        self.assertEqual(('ACTIVE', 'mae-compute-a'),
                         (found['status'], found['OS-EXT-SRV-ATTR:host']))
        self.assertEqual(3, len(self.sleeps))
        self.assertEqual('compute 2.105', self.seen[-1][2][
            'OpenStack-API-Version'])

    def test_error_fails_with_the_faults_last_lines(self):
        cloud = self.cloud([server('BUILD'), server('ERROR', fault={
            'message': 'Build of instance aborted',
            'details': 'Traceback\n  File "a.py"\n  File "b.py"\n'
                       '    raise VolumeAttachFailed\n'})])
        with self.assertRaisesRegex(
                client.Failed, 'went to ERROR: Build of instance aborted '
                r'\(File "a.py" \| File "b.py" \| raise VolumeAttachFailed\)'):
            cloud.wait_server(SERVER, timeout=60)

    def test_error_is_waited_for_when_asked_for(self):
        cloud = self.cloud([server('ERROR', fault={'message': 'No valid'})])
        self.assertEqual('ERROR', cloud.wait_server(SERVER, ('ERROR',))[
            'status'])

    def test_a_server_that_never_gets_there_times_out(self):
        cloud = self.cloud([server('ACTIVE', 'resize_migrating')])
        with self.assertRaisesRegex(config.SeriesError,
                                    f'server {SERVER} ACTIVE: still not'):
            cloud.wait_server(SERVER, timeout=0)


class ComputeLookupTest(base.RootTestCase):
    """A host's compute node and compute service are found once, or the
    lookup fails (never the first of several, never none).
    """

    def cloud(self, hypervisors, services):
        def respond(method, path, body):
            if '/os-hypervisors/detail' in path:
                return 200, {'hypervisors': [
                    {'id': f'rp-{n}', 'service': {'host': host}}
                    for n, host in enumerate(hypervisors)]}
            if '/os-services' in path:
                return 200, {'services': [{'host': host, 'state': 'up'}
                                          for host in services]}
            return 404, {}
        base.fake_services(self, respond)
        return client.Cloud()

    def test_the_one_compute_node_and_service_of_the_host(self):
        cloud = self.cloud(['mae-compute-a', 'mae-compute-b'],
                           ['mae-compute-a'])
        self.assertEqual('rp-1', cloud.provider_of('mae-compute-b'))
        self.assertEqual('up', cloud.compute_service('mae-compute-a')['state'])

    def test_two_compute_nodes_on_the_host_fail(self):
        cloud = self.cloud(['mae-compute-a', 'mae-compute-a'], [])
        with self.assertRaisesRegex(client.Failed,
                                    '2 compute nodes on mae-compute-a'):
            cloud.provider_of('mae-compute-a')

    def test_two_compute_services_on_the_host_fail(self):
        cloud = self.cloud([], ['mae-compute-a', 'mae-compute-a'])
        with self.assertRaisesRegex(client.Failed,
                                    '2 compute services on mae-compute-a'):
            cloud.compute_service('mae-compute-a')


class SlotTest(base.RootTestCase):
    """Each server's guest writes in a slot of its own: create_servers()
    gives a request the first free run of slots on its config drive, and
    a server's slot is its request's plus its launch index.
    """

    # Slots 0 and 1 (a request of two given 0), 3; one without a slot
    # (not made by create_servers()).
    SERVERS = [
        {'metadata': {guest.SLOT_KEY: '0'}, 'OS-EXT-SRV-ATTR:launch_index': 0},
        {'metadata': {guest.SLOT_KEY: '0'}, 'OS-EXT-SRV-ATTR:launch_index': 1},
        {'metadata': {guest.SLOT_KEY: '3'}, 'OS-EXT-SRV-ATTR:launch_index': 0},
        {'metadata': {}, 'OS-EXT-SRV-ATTR:launch_index': 0}]

    def setUp(self):
        super().setUp()

        def respond(method, path, body):
            if path.startswith('/v2.1/servers/detail'):
                return 200, {'servers': self.SERVERS}
            if path.startswith('/v2.1/flavors'):
                return 200, {'flavors': [{'id': 'f1', 'name': 'mae.tiny'}]}
            if method == 'POST' and path == '/v2.1/servers':
                return 202, {'reservation_id': 'r-1'}
            return 404, {}
        self.seen = base.fake_services(self, respond)
        self.cloud = client.Cloud()

    def test_a_servers_slot_is_its_requests_plus_its_launch_index(self):
        self.assertEqual([0, 1, 3], [client.slot(server)
                                     for server in self.SERVERS[:3]])

    def test_the_first_run_of_free_slots(self):
        self.assertEqual(2, self.cloud.free_slots(1))
        self.assertEqual(4, self.cloud.free_slots(2))
        self.assertIn(f'name={client.PREFIX}', [
            path for _, path, _, _ in self.seen
            if path.startswith('/v2.1/servers/detail')][-1])

    def test_the_last_slots_and_none_left(self):
        self.SERVERS = [
            {'metadata': {guest.SLOT_KEY: '0'},
             'OS-EXT-SRV-ATTR:launch_index': index}
            for index in range(guest.SLOTS - 2)]
        self.assertEqual(guest.SLOTS - 2, self.cloud.free_slots(2))
        with self.assertRaisesRegex(client.Failed,
                                    'no 3 consecutive slots free'):
            self.cloud.free_slots(3)

    def test_a_request_carries_its_slot_on_a_config_drive(self):
        self.cloud.create_servers('multi', [], count=2)
        [body] = [body for method, path, _, body in self.seen
                  if method == 'POST' and path == '/v2.1/servers']
        server = json.loads(body)['server']
        self.assertEqual((True, {guest.SLOT_KEY: '4'}, 2),
                         (server['config_drive'], server['metadata'],
                          server['max_count']))
