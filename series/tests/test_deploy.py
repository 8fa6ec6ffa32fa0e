"""Tests of series.cloud.deploy: the last run's logs and reports kept,
keystone's bootstrap, the status table, the ports checked free before
the cloud starts, and the databases (on the real MariaDB, when one
answers root on its socket).
"""

import contextlib
import io
import shutil
import socket
import subprocess
import unittest
from unittest import mock

from series.cloud import deploy
from series.cloud import hosts
from series.cloud import layout
from series.cloud import services
from series import config
from series import queue
from series.tests import base


class TreesInUseTest(base.SeriesTestCase):

    def test_the_trees_the_services_run_from_are_marked_then_freed(self):
        self.make_series()
        with mock.patch.object(deploy.service_venv, 'patched_projects',
                               return_value=[self.project]):
            deploy.mark_trees_in_use()
        self.assertEqual(deploy.IN_USE, queue.in_use(self.project))
        with self.assertRaisesRegex(config.SeriesError, 'cloud down'):
            self.quiet(queue.apply, self.project, force=True)
        with mock.patch.object(deploy.config, 'load_projects',
                               return_value={'demo': self.project}):
            deploy.unmark_trees()
        self.assertIsNone(queue.in_use(self.project))


class KeepLastRunTest(base.RootTestCase):

    def test_logs_and_reports_replace_the_previous_ones(self):
        cloud = layout.directory()
        (cloud / 'log').mkdir(parents=True)
        (cloud / 'log' / 'nova-api.log').write_text('api')
        (cloud / 'report.json').write_text('{}')
        (cloud / 'clouds.yaml').write_text('clouds: {}')
        (layout.last_run() / 'log').mkdir(parents=True)
        (layout.last_run() / 'upgrade.json').write_text('{}')
        self.assertEqual(['log', 'report.json'], deploy.keep_last_run())
        self.assertEqual(['log', 'report.json'],
                         sorted(path.name for path in
                                layout.last_run().iterdir()))
        self.assertEqual('api', (layout.last_run() / 'log' /
                                 'nova-api.log').read_text())
        self.assertEqual(['clouds.yaml'],
                         [path.name for path in cloud.iterdir()])

    def test_nothing_to_keep_leaves_the_previous_run(self):
        (layout.last_run() / 'log').mkdir(parents=True)
        self.assertEqual([], deploy.keep_last_run())
        self.assertTrue((layout.last_run() / 'log').is_dir())


class KeystoneBootstrapTest(base.RootTestCase):

    def test_bootstrap_password_is_not_on_the_command_line(self):
        commands = []
        with mock.patch.object(deploy.process, 'run',
                               lambda cmd, **kw: commands.append((cmd, kw))):
            deploy.keystone_bootstrap()
        bootstrap, options = next((cmd, kw) for cmd, kw in commands
                                  if 'bootstrap' in cmd)
        self.assertEqual(layout.password(),
                         options['env']['OS_BOOTSTRAP_PASSWORD'])
        self.assertNotIn(layout.password(), ' '.join(map(str, bootstrap)))


class StatusTest(unittest.TestCase):

    def test_table_and_exit_status(self):
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            healthy = deploy.print_status([
                ('keystone', 101, 18500, True),
                ('nova-compute', 102, None, True)])
            sick = deploy.print_status([
                ('keystone', 101, 18500, True),
                ('nova-compute', None, None, False),
                ('cinder-volume', 103, None, None)])
        self.assertEqual((0, 1), (healthy, sick))
        lines = output.getvalue().splitlines()
        self.assertIn('not running', lines[-2])
        self.assertIn('unknown (no token)', lines[-1])

    def test_a_long_name_keeps_the_columns(self):
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            deploy.print_status([('neutron-macvtap-agent-a', 104, None, True),
                                 ('keystone', 101, 18500, True)])
        lines = [line.removeprefix('cloud: ')
                 for line in output.getvalue().splitlines()]
        self.assertEqual({lines[0].index('health')},
                         {line.index('healthy') for line in lines[1:]})


class PortsTest(base.RootTestCase):

    def ports(self, keystone):
        # Not the compute hosts' libvirt ports: a cloud of this checkout
        # may be running.
        patcher = mock.patch.object(hosts, 'HOSTS', ())
        patcher.start()
        self.addCleanup(patcher.stop)
        return mock.patch.dict(layout.PORTS, {
            'keystone': keystone, 'ceph-mon': base.free_port()}, clear=True)

    def test_a_port_taken_by_another_process_is_refused(self):
        with socket.socket() as listener:
            listener.bind(('127.0.0.1', 0))
            listener.listen()
            port = listener.getsockname()[1]
            with self.ports(port), \
                    mock.patch.object(services, 'all_services', list):
                with self.assertRaises(config.SeriesError) as raised:
                    deploy.check_ports()
        self.assertIn(f'keystone ({port})', str(raised.exception))

    def test_free_ports_pass(self):
        with self.ports(base.free_port()), \
                mock.patch.object(services, 'all_services', list):
            deploy.check_ports()

    def test_a_host_address_taken_by_another_libvirtd_is_refused(self):
        with socket.socket() as listener:
            listener.bind(('127.0.0.2', 0))
            listener.listen()
            port = listener.getsockname()[1]
            host = hosts.Host('elsewhere', '127.0.0.2', 'z')
            with self.ports(base.free_port()), \
                    mock.patch.object(services, 'all_services', list), \
                    mock.patch.object(hosts, 'HOSTS', (host,)), \
                    mock.patch.object(hosts, 'LIBVIRT_PORT', port):
                with self.assertRaises(config.SeriesError) as raised:
                    deploy.check_ports()
        self.assertIn(f'libvirtd of elsewhere (127.0.0.2:{port})',
                      str(raised.exception))


def mariadb_running():
    return subprocess.run(
        ['mariadb', '--protocol=socket', '-u', 'root', '-e', 'SELECT 1'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0 \
        if shutil.which('mariadb') else False


@unittest.skipUnless(mariadb_running(), 'no MariaDB to talk to as root on '
                     'its socket (CI starts one)')
class DatabasesTest(base.RootTestCase):
    """On the real MariaDB, under names of its own so that a cloud of
    this checkout that is up is left alone.
    """

    def setUp(self):
        super().setUp()
        for patcher in (
                mock.patch.object(layout, 'DATABASES', ('mae_selftest',)),
                mock.patch.object(layout, 'DB_USER', 'mae_selftest'),
                mock.patch.object(deploy, 'rabbitmqctl')):
            patcher.start()
            self.addCleanup(patcher.stop)
        deploy.rabbitmqctl.return_value.stdout = '/\n'
        self.addCleanup(deploy.mariadb, 'DROP DATABASE IF EXISTS mae_selftest;'
                        "DROP USER IF EXISTS 'mae_selftest'@'localhost';"
                        "DROP USER IF EXISTS 'mae_selftest'@'127.0.0.1';")
        deploy.mariadb('CREATE DATABASE mae_selftest; '
                       'CREATE TABLE mae_selftest.left_behind (id INT);')

    def tables_as_the_cloud(self):
        return subprocess.run(
            ['mariadb', '-h', layout.HOST, '-u', layout.DB_USER,
             f'-p{layout.password()}', '-N', '-e', 'SHOW TABLES',
             'mae_selftest'], check=True, text=True,
            stdout=subprocess.PIPE).stdout.split()

    def test_a_new_cloud_drops_what_a_lost_cloud_left(self):
        deploy.databases(new_cloud=True)
        self.assertEqual([], self.tables_as_the_cloud())

    def test_a_running_cloud_keeps_its_data(self):
        deploy.databases(new_cloud=False)
        self.assertEqual(['left_behind'], self.tables_as_the_cloud())
