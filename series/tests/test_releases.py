"""Tests of series.cloud.releases: which release of Nova and Cinder each
part of the cloud runs, as its services and management commands see it.
"""

import os
from pathlib import Path
import subprocess
import time
from unittest import mock

from series.cloud import releases
from series.cloud import services
from series.tests import base


class ReleasesTest(base.RootTestCase):
    """What runs the pristine releases in `cloud upgrade`: the
    environment of each service, and the management commands.
    """

    def environments(self):
        return {service.name: service.env
                for service in services.all_services()}

    def test_without_a_record_everything_runs_the_series(self):
        self.assertEqual({}, releases.current())
        self.assertEqual(releases.SERIES, releases.release_of('control'))
        self.assertEqual({}, {name: env for name, env in
                              self.environments().items() if env})

    def test_each_part_runs_its_release(self):
        releases.set_release(releases.CONTROL, releases.PRISTINE)
        releases.set_release('mae-compute-b', releases.PRISTINE)
        pristine = {'PYTHONPATH': str(releases.pristine_path())}
        environments = self.environments()
        for name in ('nova-api', 'cinder-api', 'nova-conductor',
                     'nova-scheduler', 'cinder-scheduler', 'cinder-volume',
                     'nova-compute-b'):
            self.assertEqual(pristine, environments[name], name)
        for name in ('nova-compute-a', 'keystone', 'placement',
                     'glance-api', 'neutron-api', 'libvirtd-b'):
            self.assertEqual({}, environments[name], name)
        releases.set_release(releases.CONTROL, releases.SERIES)
        self.assertEqual({}, self.environments()['nova-api'])
        self.assertEqual({'control': 'series', 'mae-compute-b': 'pristine'},
                         releases.current())

    def test_no_other_release(self):
        with self.assertRaises(ValueError):
            releases.set_release(releases.CONTROL, '34.0.0')

    def test_nova_and_cinder_manage_run_the_control_planes_release(self):
        releases.set_release(releases.CONTROL, releases.PRISTINE)
        with mock.patch.object(services.process, 'run') as run:
            services.manage('nova-manage', 'db', 'sync')
            services.manage('cinder-manage', 'db', 'sync')
            services.manage('keystone-manage', 'db_sync')
        envs = [call.kwargs['env'] for call in run.call_args_list]
        pristine = {'PYTHONPATH': str(releases.pristine_path())}
        self.assertEqual([pristine, pristine, None], envs)


class RunningReleaseTest(base.RootTestCase):
    """What a running process imports, read from its own environment."""

    def started(self, env):
        """A child with `env`, once it has executed sleep (until then
        /proc shows another environment).
        """
        child = subprocess.Popen(['sleep', '30'], env=env)
        self.addCleanup(child.wait)
        self.addCleanup(child.kill)
        cmdline = Path(f'/proc/{child.pid}/cmdline')
        for _ in range(500):
            if cmdline.read_bytes().startswith(b'sleep\0'):
                return child.pid
            time.sleep(0.01)
        self.fail('the child did not execute sleep')

    def test_a_process_with_the_pristine_releases_first(self):
        pid = self.started({'PYTHONPATH': os.pathsep.join(
            [str(releases.pristine_path()), '/elsewhere'])})
        self.assertEqual(releases.PRISTINE, releases.running_release(pid))

    def test_a_process_without_them_or_with_them_later(self):
        self.assertEqual(releases.SERIES, releases.running_release(
            self.started({'HOME': '/root'})))
        pid = self.started({'PYTHONPATH': os.pathsep.join(
            ['/elsewhere', str(releases.pristine_path())])})
        self.assertEqual(releases.SERIES, releases.running_release(pid))

    def test_a_blank_environment_tells_nothing(self):
        # As setproctitle leaves it: the title written over it.
        self.assertIsNone(releases.running_release(self.started({})))
