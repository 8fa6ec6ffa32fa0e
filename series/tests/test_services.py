"""Tests of series.cloud.services: the cloud's processes started, stopped
by PID and named with their log when they exit, each with its
environment, and a neutron agent alive as neutron lists it.
"""

import json
from pathlib import Path
import socket
import sys

from series.cloud import layout
from series.cloud import rest
from series.cloud import services
from series import config
from series.tests import base


class ServicesTest(base.RootTestCase):

    def setUp(self):
        super().setUp()
        layout.directory().mkdir(parents=True)

    def sleeper(self, name='sleeper'):
        return services.Service(name, (sys.executable, '-c',
                                       'import time; time.sleep(60)'))

    def test_a_neutron_agent_alive_as_neutron_lists_it(self):
        agent = services.by_name('neutron-macvtap-agent-b')
        asked = []

        class Admin:
            def call(self, method, service, path):
                asked.append((method, service, path))
                return rest.Response(200, {}, json.dumps(
                    {'agents': [{'alive': alive}]}))

        for alive in (True, False):
            self.assertIs(alive, services.agent_alive(Admin(), agent))
        self.assertEqual(('GET', 'neutron-api', '/agents?host=mae-compute-b'
                          '&binary=neutron-macvtap-agent'), asked[0])

    def test_started_then_stopped_by_pid(self):
        service = self.sleeper()
        self.addCleanup(service.stop)
        services.start(service, timeout=10)
        pid = service.pid()
        self.assertIsNotNone(pid)
        self.assertIsNotNone(services.start_time(pid))
        self.assertTrue(service.stop())
        self.assertIsNone(services.start_time(pid))
        self.assertFalse(service.pid_file.exists())
        self.assertFalse(service.stop())

    def test_a_reused_pid_is_not_ours(self):
        service = self.sleeper()
        service.pid_file.parent.mkdir(parents=True)
        # This process, but with another start time: a PID file left by
        # a process that is gone, its PID reused.
        service.pid_file.write_text(f'{Path("/proc/self").resolve().name} '
                                    '1\n')
        self.assertIsNone(service.pid())

    def test_a_service_that_exits_is_named_with_its_log(self):
        # An API service (it has a port) that exits before it answers.
        with socket.socket() as unused:
            unused.bind(('127.0.0.1', 0))
            port = unused.getsockname()[1]
        service = services.Service('broken', (
            sys.executable, '-c', 'import sys, time; time.sleep(0.5); '
            'print("no config"); sys.exit(3)'), port=port)
        with self.assertRaises(config.SeriesError) as raised:
            services.start(service, timeout=10)
        self.assertIn('broken exited (3)', str(raised.exception))
        self.assertIn('no config', str(raised.exception))


class ServiceEnvironmentTest(base.RootTestCase):

    def test_a_service_gets_its_environment(self):
        layout.directory().mkdir(parents=True)
        service = services.Service('printer', (
            sys.executable, '-c', 'import os, time; '
            'print(os.environ.get("PYTHONPATH"), flush=True); '
            'time.sleep(60)'), env={'PYTHONPATH': '/pristine'})
        self.addCleanup(service.stop)
        services.start(service, timeout=10)
        rest.wait('the output', lambda: 'pristine' in service.log_tail(), 10,
                  interval=0.1)
        self.assertEqual('/pristine', service.log_tail().strip())
