"""The real cloud's parts that run without the cloud: configuration
files, processes by PID, libvirt and QEMU disk views, tempest's selection
and the tempest and openstacksdk steps' verdicts.
(`tools/series cloud scenario` runs the rest, in CI.)
"""

import configparser
import contextlib
import io
import json
import os
from pathlib import Path
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

from series.cloud import api
from series.cloud import client
from series.cloud import configs
from series.cloud import deploy
from series.cloud import hosts
from series.cloud import layout
from series.cloud import network
from series.cloud import releases
from series.cloud import scenario
from series.cloud import sdk_functional
from series.cloud import services
from series.cloud import tempest
from series.cloud import upgrade
from series.cloud import venv
from series.cloud import views
from series import config
from series import suites
from series.tests import base

DOMAIN_XML = """\
<domain type='qemu'>
  <devices>
    <disk type='network' device='disk'>
      <source protocol='rbd' name='volumes/volume-aaaa'/>
      <target dev='vda' bus='virtio'/>
      <readonly/>
      <shareable/>
      <serial>aaaa</serial>
      <alias name='ua-aaaa'/>
    </disk>
    <disk type='network' device='disk'>
      <source protocol='rbd' name='volumes/volume-bbbb'/>
      <target dev='vdb' bus='virtio'/>
      <shareable/>
      <serial>bbbb</serial>
      <alias name='ua-bbbb'/>
    </disk>
    <disk type='file' device='cdrom'>
      <target dev='hdd' bus='ide'/>
      <alias name='ide0-1-1'/>
    </disk>
  </devices>
</domain>
"""

QUERY_BLOCK = """\
{"return": [
  {"device": "", "qdev": "/machine/peripheral/ua-aaaa/virtio-backend",
   "inserted": {"ro": true}},
  {"device": "", "qdev": "/machine/peripheral/ua-bbbb/virtio-backend",
   "inserted": {"ro": false}},
  {"device": "ide0-1-1", "qdev": "", "removable": true}
]}
"""


class DisksTest(unittest.TestCase):

    def test_xml_and_qemu_views_per_volume(self):
        self.assertEqual({'aaaa': ('vda', True, True),
                          'bbbb': ('vdb', False, False)},
                         views.disks(DOMAIN_XML, QUERY_BLOCK))

    def test_a_disk_qemu_does_not_list_has_no_qemu_view(self):
        self.assertEqual({'aaaa': ('vda', True, None),
                          'bbbb': ('vdb', False, None)},
                         views.disks(DOMAIN_XML, '{"return": []}'))


class RootTestCase(unittest.TestCase):
    """config.ROOT in a temporary directory."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        patcher = mock.patch.object(config, 'ROOT', self.root)
        patcher.start()
        self.addCleanup(patcher.stop)


class ConfigsTest(RootTestCase):

    def setUp(self):
        super().setUp()
        for path in ('nova/etc/nova/api-paste.ini',
                     'cinder/etc/cinder/api-paste.ini'):
            (self.root / path).parent.mkdir(parents=True)
            (self.root / path).write_text('[pipeline:main]\n')
        (self.root / 'cinder/etc/cinder/resource_filters.json').write_text(
            '{"volume": ["name"]}\n')
        for name in ('glance/glance-api-paste.ini', 'neutron/api-paste.ini'):
            path = self.root / '.work/venvs/cloud/etc' / name
            path.parent.mkdir(parents=True)
            path.write_text('[pipeline:main]\n')
        patcher = mock.patch.object(
            configs.config, 'get_project',
            lambda name: types.SimpleNamespace(tree=self.root / name))
        patcher.start()
        self.addCleanup(patcher.stop)
        self.inis = configs.write_all()

    def parse(self, service, name):
        # strict: a section or option given twice is an error, as
        # oslo.config would otherwise merge it silently (uWSGI repeats
        # `env` on purpose).
        parser = configparser.ConfigParser(strict=service != 'uwsgi',
                                           interpolation=None)
        parser.read_string((layout.etc(service) / name).read_text())
        return parser

    def test_every_file_parses(self):
        files = sorted(path.relative_to(layout.etc()) for path in
                       layout.etc().rglob('*') if path.is_file())
        self.assertEqual(
            ['cinder/api-paste.ini', 'cinder/cinder.conf',
             'cinder/resource_filters.json',
             'glance/glance-api-paste.ini', 'glance/glance-api.conf',
             'keystone/keystone.conf', 'neutron/api-paste.ini',
             'neutron/macvtap-a.conf', 'neutron/macvtap-b.conf',
             'neutron/ml2_conf.ini', 'neutron/neutron.conf',
             'nova/api-paste.ini', 'nova/compute-a.conf',
             'nova/compute-b.conf', 'nova/nova.conf',
             'placement/placement.conf', 'uwsgi/cinder-api.ini',
             'uwsgi/glance-api.ini', 'uwsgi/keystone.ini',
             'uwsgi/neutron-api.ini', 'uwsgi/nova-api.ini',
             'uwsgi/placement.ini'], [str(path) for path in files])
        for path in files:
            if path.suffix != '.json':
                self.parse(*path.parts)

    def test_nova_runs_libvirt_with_qemu_and_sends_service_tokens(self):
        for name in ('nova.conf', 'compute-a.conf'):
            nova = self.parse('nova', name)
            self.assertEqual('qemu', nova['libvirt']['virt_type'])
            self.assertEqual('rbd', nova['libvirt']['images_type'])
            # Two hosts: a resize moves the server.
            self.assertEqual('false',
                             nova['DEFAULT']['allow_resize_to_same_host'])
            # Below STOP_SECONDS: `cloud down` need not kill nova-compute.
            self.assertLess(int(nova['DEFAULT']['manager_shutdown_timeout']),
                            services.STOP_SECONDS)
            self.assertEqual('true',
                             nova['service_user']['send_service_user_token'])
            self.assertEqual('block-storage:cinder:publicURL',
                             nova['cinder']['catalog_info'])
            # A rolling upgrade (`cloud upgrade`) caps the compute RPC
            # API at what the oldest nova-compute reads.
            self.assertEqual('auto', nova['upgrade_levels']['compute'])
        nova = self.parse('nova', 'nova.conf')
        self.assertEqual(configs.CONTROL_HOST, nova['DEFAULT']['host'])
        for name in ('compute-a.conf', 'compute-b.conf'):
            compute = self.parse('nova', name)
            # Each host's instances path is its own, its disks on RBD.
            self.assertEqual('true', compute['workarounds'][
                'ensure_libvirt_rbd_instance_dir_cleanup'])
        self.assertIn('/mae_nova_api', nova['api_database']['connection'])

    def test_a_compute_written_again_without_provider_refresh(self):
        host = hosts.HOSTS[1]
        written = (layout.etc('nova') / 'compute-b.conf').read_text()
        compute = self.parse('nova', 'compute-b.conf')
        self.assertNotIn('compute', compute)
        self.assertNotIn('update_resources_interval', compute['DEFAULT'])
        configs.write_nova_compute(host, refresh_provider=False)
        compute = self.parse('nova', 'compute-b.conf')
        self.assertEqual('0', compute['compute'][
            'resource_provider_association_refresh'])
        self.assertEqual('-1', compute['DEFAULT']['update_resources_interval'])
        configs.write_nova_compute(host)
        self.assertEqual(written, (layout.etc('nova') /
                                   'compute-b.conf').read_text())

    def test_each_compute_host_its_name_and_migration_address(self):
        computes = [self.parse('nova', f'compute-{host.key}.conf')
                    for host in hosts.HOSTS]
        self.assertEqual([host.name for host in hosts.HOSTS],
                         [nova['DEFAULT']['host'] for nova in computes])
        self.assertEqual([host.address for host in hosts.HOSTS],
                         [nova['libvirt']['live_migration_inbound_addr']
                          for nova in computes])
        for nova in computes:
            # As on a real compute host: no database, the same state and
            # instances path on every host (each its own behind it), the
            # local libvirtd.
            self.assertNotIn('database', nova)
            self.assertNotIn('api_database', nova)
            self.assertEqual(str(hosts.compute_state()),
                             nova['DEFAULT']['state_path'])
            self.assertEqual(str(hosts.compute_state() / 'instances'),
                             nova['DEFAULT']['instances_path'])
            self.assertEqual('qemu:///system',
                             nova['libvirt']['connection_uri'])
            # Its privsep helper reads its own file.
            self.assertTrue(nova['privsep_osbrick']['helper_command']
                            .endswith(f'{nova["DEFAULT"]["host"][-1]}.conf'))

    def test_both_sides_require_service_tokens(self):
        for service, name in (('nova', 'nova.conf'),
                              ('cinder', 'cinder.conf')):
            conf = self.parse(service, name)
            self.assertEqual('true', conf['keystone_authtoken'][
                'service_token_roles_required'])
            self.assertEqual('true', conf['service_user'][
                'send_service_user_token'])

    def test_privsep_runs_the_virtualenv_helper_without_sudo(self):
        nova = self.parse('nova', 'nova.conf')
        for section in ('nova_sys_admin', 'privsep_osbrick'):
            helper = nova[section]['helper_command'].split()
            self.assertEqual(str(self.root / '.work/venvs/cloud/bin/'
                                 'privsep-helper'), helper[0])
            self.assertEqual(str(layout.etc('nova') / 'nova.conf'),
                             helper[-1])

    def test_neutron_binds_ports_to_each_hosts_macvtap_agent(self):
        ml2 = self.parse('neutron', 'ml2_conf.ini')
        self.assertEqual('macvtap', ml2['ml2']['mechanism_drivers'])
        self.assertEqual(network.PHYSNET,
                         ml2['ml2_type_flat']['flat_networks'])
        neutron = self.parse('neutron', 'neutron.conf')
        self.assertEqual('true', neutron['DEFAULT'].get(
            'notify_nova_on_port_status_changes', 'true'))
        self.assertEqual('nova', neutron['nova']['username'])
        lowers = set()
        for host in hosts.HOSTS:
            name = f'macvtap-{host.key}.conf'
            agent = self.parse('neutron', name)
            self.assertEqual(host.name, agent['DEFAULT']['host'])
            physnet, lower = agent['macvtap'][
                'physical_interface_mappings'].split(':')
            self.assertEqual(network.PHYSNET, physnet)
            lowers.add(lower)
            self.assertEqual('noop', agent['securitygroup']['firewall_driver'])
            for section in configs.NEUTRON_PRIVSEP:
                self.assertEqual(str(layout.etc('neutron') / name),
                                 agent[section]['helper_command'].split()[-1])
        # A live migration has the server's MAC address on both hosts.
        self.assertEqual(len(hosts.HOSTS), len(lowers))

    def test_cinder_uses_rbd_and_no_multiattach_default(self):
        cinder = self.parse('cinder', 'cinder.conf')
        self.assertEqual(['ceph', 'ceph2'],
                         cinder['DEFAULT']['enabled_backends'].split(','))
        # Two pools: a retype between them is a migration Cinder makes
        # through Nova's swap volume.
        self.assertEqual(['volumes', 'volumes2'],
                         [cinder[name]['rbd_pool'] for name in
                          ('ceph', 'ceph2')])
        for name in ('ceph', 'ceph2'):
            self.assertEqual('cinder.volume.drivers.rbd.RBDDriver',
                             cinder[name]['volume_driver'])
        # Volumes are multiattach only when asked (tempest's plain
        # volumes must attach below 2.60).
        self.assertNotIn('default_volume_type', cinder['DEFAULT'])

    def test_cinder_lets_users_filter_volumes_by_name(self):
        cinder = self.parse('cinder', 'cinder.conf')
        filters = Path(cinder['DEFAULT']['resource_query_filters_file'])
        self.assertEqual(layout.etc('cinder') / 'resource_filters.json',
                         filters)
        self.assertEqual({'volume': ['name']},
                         json.loads(filters.read_text()))

    def test_one_uwsgi_worker_per_api_on_its_port(self):
        for name, ini in self.inis.items():
            uwsgi = configparser.ConfigParser(strict=False,
                                              interpolation=None)
            uwsgi.read_string(ini.read_text())
            self.assertEqual(f'127.0.0.1:{layout.PORTS[name]}',
                             uwsgi['uwsgi']['http-socket'])
            self.assertEqual('1', uwsgi['uwsgi']['processes'])

    def test_cinder_quota_leaves_room_after_the_scenario(self):
        cinder = self.parse('cinder', 'cinder.conf')
        self.assertGreaterEqual(int(cinder['DEFAULT']['quota_volumes']), 20)

    def test_password_is_kept_and_private(self):
        password = layout.password()
        self.assertEqual(password, layout.password())
        self.assertEqual(0o600, (layout.directory() / 'password').stat()
                         .st_mode & 0o777)
        self.assertIn(password, (layout.etc('nova') / 'nova.conf')
                      .read_text())


def can_make_namespaces():
    return os.geteuid() == 0 and shutil.which('ip') and subprocess.run(
        ['ip', 'netns', 'list'], capture_output=True).returncode == 0


@unittest.skipUnless(can_make_namespaces(), 'needs root and ip netns')
class NetworkTest(unittest.TestCase):
    """The cloud's links, made in a network namespace of the test's."""

    MAC = '52:54:00:00:00:01'

    def setUp(self):
        self.namespace = f'mae-test-{os.getpid()}'
        subprocess.run(['ip', 'netns', 'add', self.namespace], check=True)
        self.addCleanup(subprocess.run,
                        ['ip', 'netns', 'delete', self.namespace])
        for command in network.link_commands():
            self.ip(*command)

    def ip(self, *command, check=True):
        return subprocess.run(['ip', '-n', self.namespace, *command],
                              capture_output=True, text=True, check=check)

    def macvtap(self, name, lower):
        """A macvtap device with MAC on `lower`, brought up as libvirt
        does for a guest: the failure, if it fails.
        """
        self.ip('link', 'add', 'link', lower, 'name', name, 'address',
                self.MAC, 'type', 'macvtap', 'mode', 'bridge')
        return self.ip('link', 'set', name, 'up', check=False).stderr

    def test_each_hosts_lower_device_on_the_gateways_bridge(self):
        links = {link['ifname']: link for link in json.loads(
            self.ip('-j', '-d', 'link', 'show').stdout)}
        self.assertEqual(
            sorted(network.bridge_port(host) for host in hosts.HOSTS),
            sorted(name for name, link in links.items()
                   if link.get('master') == network.BRIDGE))
        for host in hosts.HOSTS:
            self.assertEqual(network.bridge_port(host),
                             links[network.lower_device(host)]['link'])
        address = json.loads(self.ip('-j', 'addr', 'show', network.BRIDGE)
                             .stdout)[0]['addr_info'][0]
        self.assertEqual((str(network.GATEWAY), network.SUBNET.prefixlen),
                         (address['local'], address['prefixlen']))

    def test_one_mac_address_on_both_hosts_as_in_a_live_migration(self):
        first, second = hosts.HOSTS
        self.assertEqual('', self.macvtap(
            'macvtap0', network.lower_device(first)))
        self.assertEqual('', self.macvtap(
            'macvtap1', network.lower_device(second)))
        # The kernel refuses it on one lower device: why each host has
        # its own.
        self.assertIn('Address already in use', self.macvtap(
            'macvtap2', network.lower_device(first)))


class KeepLastRunTest(RootTestCase):

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


class KeystoneBootstrapTest(RootTestCase):

    def test_password_never_reads_as_an_option(self):
        # A password such as '-dSL...' made keystone-manage's argument
        # parser fail (exit 2) in CI.
        for _ in range(200):
            (layout.directory() / 'password').unlink(missing_ok=True)
            self.assertRegex(layout.password(), r'^[0-9a-f]{32}$')

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


class ServicesTest(RootTestCase):

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
                return api.Response(200, {}, json.dumps(
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


class ReleasesTest(RootTestCase):
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
        with mock.patch.object(deploy.process, 'run') as run:
            deploy.manage('nova-manage', 'db', 'sync')
            deploy.manage('cinder-manage', 'db', 'sync')
            deploy.manage('keystone-manage', 'db_sync')
        envs = [call.kwargs['env'] for call in run.call_args_list]
        pristine = {'PYTHONPATH': str(releases.pristine_path())}
        self.assertEqual([pristine, pristine, None], envs)

    def test_a_service_gets_its_environment(self):
        layout.directory().mkdir(parents=True)
        service = services.Service('printer', (
            sys.executable, '-c', 'import os, time; '
            'print(os.environ.get("PYTHONPATH"), flush=True); '
            'time.sleep(60)'), env={'PYTHONPATH': '/pristine'})
        self.addCleanup(service.stop)
        services.start(service, timeout=10)
        api.wait('the output', lambda: 'pristine' in service.log_tail(), 10,
                 interval=0.1)
        self.assertEqual('/pristine', service.log_tail().strip())

    def test_the_scenario_refuses_a_cloud_left_on_the_pristine_releases(self):
        releases.set_release('mae-compute-b', releases.PRISTINE)
        with mock.patch.object(scenario.deploy, 'up') as up, \
                self.assertRaisesRegex(config.SeriesError,
                                       'pristine releases on mae-compute-b'):
            scenario.run()
        up.assert_not_called()

    def test_back_on_the_series_switches_every_part_then_starts(self):
        for part in (releases.CONTROL, 'mae-compute-a', 'mae-compute-b'):
            releases.set_release(part, releases.PRISTINE)
        seen = []
        with mock.patch.object(upgrade.services, 'stop_all') as stop_all, \
                mock.patch.object(upgrade, 'sync_databases',
                                  lambda: seen.append(releases.current())), \
                mock.patch.object(upgrade, 'start_services') as start, \
                mock.patch.object(upgrade.deploy, 'admin_session'), \
                mock.patch.object(upgrade, 'series_state',
                                  return_value=SERIES_STATE):
            self.assertEqual(SERIES_STATE,
                             upgrade.back_on_the_series('head'))
        nova_and_cinder = ['cinder-api', 'nova-api', 'cinder-scheduler',
                           'cinder-volume', 'nova-conductor',
                           'nova-scheduler', 'nova-compute-a',
                           'nova-compute-b']
        self.assertEqual(nova_and_cinder, [
            service.name for service in stop_all.call_args.args[0]])
        self.assertEqual([{'control': 'series', 'mae-compute-a': 'series',
                           'mae-compute-b': 'series'}], seen)
        # Started in the cloud's order: the conductor before the computes.
        self.assertEqual(nova_and_cinder, start.call_args.args[0])

    def test_back_on_the_series_fails_on_a_state_not_of_the_series(self):
        with mock.patch.object(upgrade.services, 'stop_all'), \
                mock.patch.object(upgrade, 'sync_databases'), \
                mock.patch.object(upgrade, 'start_services'), \
                mock.patch.object(upgrade.deploy, 'admin_session'), \
                mock.patch.object(upgrade, 'series_state', return_value=dict(
                    SERIES_STATE, alembic='ab450ba04102')), \
                self.assertRaisesRegex(client.Failed, 'alembic head'):
            upgrade.back_on_the_series('head')


SERIES_STATE = {
    'attach_mode columns': {'mae_nova.block_device_mapping': True},
    'alembic': 'head',
    'compute versions': {'mae-compute-a': 75, 'mae-compute-b': 75}}


PROJECTS_TOML = """\
[nova]
version = "34.0.0"
sha256 = "0"
constraints = "constraints/upper-constraints.txt"
series-requirements = ["os-traits"]

[os-traits]
version = "3.9.0"
sha256 = "0"
installs-as = "{installs_as}"
constraints = "constraints/upper-constraints.txt"

[cinder]
version = "29.0.0"
sha256 = "0"
constraints = "constraints/upper-constraints.txt"
"""


class VenvTest(RootTestCase):
    """The cloud's virtualenv: which patched trees, in which order, as
    which versions, and when it is rebuilt (pip itself is not run).
    """

    def setUp(self):
        super().setUp()
        self.write_projects('3.9.0+multiattach.1')
        (self.root / 'constraints').mkdir()
        (self.root / 'constraints/upper-constraints.txt').write_text(
            'cinder===28.0.0\nnova===33.0.0\noslo.db===18.1.0\n'
            'os-traits===3.9.0\n')
        for name in ('nova', 'os-traits', 'cinder'):
            tree = self.root / '.work/trees' / name
            (tree / '.git').mkdir(parents=True)
            (tree / 'requirements.txt').write_text(f'{name} needs\n')
        self.installed = []
        patchers = [mock.patch.object(venv.process, 'run', self.fake_run),
                    mock.patch.object(venv.process, 'say', lambda line: None),
                    mock.patch.object(venv.subprocess, 'Popen',
                                      self.fake_popen),
                    mock.patch.object(venv, 'link_ceph_modules',
                                      lambda path: None),
                    mock.patch.object(venv.envs, 'uv', lambda: Path('uv'))]
        for patcher in patchers:
            patcher.start()
            self.addCleanup(patcher.stop)

    def write_projects(self, installs_as):
        (self.root / 'projects.toml').write_text(
            PROJECTS_TOML.format(installs_as=installs_as))

    def fake_run(self, cmd, env=None, **kwargs):
        if cmd[:2] == ['rm', '-rf']:
            shutil.rmtree(cmd[2], ignore_errors=True)
        elif cmd[1:3] == ['-m', 'venv']:
            Path(cmd[3]).mkdir(parents=True)
        elif '-e' in cmd:
            self.installed.append(
                (Path(cmd[cmd.index('-e') + 1]).name, env['PBR_VERSION']))

    def fake_popen(self, cmd, **kwargs):
        self.installed.append(('releases', None))
        return mock.Mock(stdout=iter(()), wait=lambda: 0)

    def test_patched_trees_in_order_each_as_its_version(self):
        # os-traits before Nova, whose requirements ask for its version;
        # placement (one of the releases after) then finds it installed.
        venv.ensure()
        self.assertEqual([('os-traits', '3.9.0+multiattach.1'),
                          ('nova', '34.0.0'), ('cinder', '29.0.0'),
                          ('releases', None)],
                         self.installed)

    def test_constraints_drop_every_patched_project(self):
        self.assertEqual(['os-traits', 'nova', 'cinder'],
                         [p.name for p in venv.patched_projects()])
        venv.ensure()
        self.assertEqual('oslo.db===18.1.0\n',
                         (venv.path() / 'upper-constraints.txt').read_text())

    def test_rebuilt_when_the_installed_version_changes(self):
        venv.ensure()
        venv.ensure()
        self.assertEqual(4, len(self.installed))
        self.write_projects('3.9.0+multiattach.2')
        venv.ensure()
        self.assertEqual(('os-traits', '3.9.0+multiattach.2'),
                         self.installed[4])

    def test_rebuilt_when_a_requirements_file_changes(self):
        venv.ensure()
        (self.root / '.work/trees/os-traits/requirements.txt').write_text(
            'pbr\n')
        venv.ensure()
        self.assertEqual(8, len(self.installed))

    def test_missing_work_trees_are_applied(self):
        for name in ('os-traits', 'cinder'):
            shutil.rmtree(self.root / '.work/trees' / name / '.git')
        with mock.patch.object(venv.queue, 'apply') as apply:
            venv.patched_projects()
        self.assertEqual(['os-traits', 'cinder'],
                         [call.args[0].name for call in apply.call_args_list])


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


class TempestTest(unittest.TestCase):

    def test_selection(self):
        def selected(test):
            return bool(re.search('|'.join(tempest.TESTS), test))
        volumes = 'tempest.api.compute.volumes.'
        admin = 'tempest.api.compute.admin.'
        for test in (volumes + 'test_attach_volume_mode.AttachVolumeMode'
                     'MultiCreateTest.test_x[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_list_get_volume_attachments_multiattach'
                     '[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_boot_from_multiattach_volume[id-1]',
                     volumes + 'test_attach_volume_negative.AttachVolume'
                     'NegativeTest.test_attach_attached_volume_to_different_'
                     'server[id-1]'):
            self.assertTrue(selected(test), test)
        for test in (volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_boot_from_multiattach_volume_direct_lun'
                     '[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_resize_server_with_multiattached_volume'
                     '[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeTestJSON.'
                     'test_attach_detach_volume[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeShelveTestJSON'
                     '.test_x[id-1]',
                     volumes + 'test_attach_volume_negative.AttachVolume'
                     'NegativeTest.test_delete_attached_volume[id-1]',
                     volumes + 'test_volumes_get.VolumesGetTestJSON.test_x'
                     '[id-1]',
                     admin + 'test_live_migration.LiveMigrationTest.'
                     'test_volume_backed_live_migration[id-1,volume]',
                     admin + 'test_migrations.MigrationsAdminTest.'
                     'test_cold_migration[id-1]'):
            self.assertFalse(selected(test), test)

    def test_each_test_on_one_worker(self):
        # As stestr's --worker-file reads it: a worker runs the ids one of
        # its regexes re.search()es.
        workers = [[re.compile(regex) for regex in worker['worker']]
                   for worker in json.loads(tempest.workers())]
        volumes = 'tempest.api.compute.volumes.'
        first = (volumes + 'test_attach_volume_mode.AttachVolumeModeGuest'
                 'Test.test_x[id-1]',
                 volumes + 'test_attach_volume_mode.AttachVolumeModeMulti'
                 'CreateTest.test_x[id-1]',
                 volumes + 'test_attach_volume.AttachVolumeMultiAttachTest.'
                 'test_boot_from_multiattach_volume[id-1]')
        second = (volumes + 'test_attach_volume_mode.AttachVolumeModeTest.'
                  'test_x[id-1]',
                  volumes + 'test_attach_volume.AttachVolumeMultiAttachTest.'
                  'test_list_get_volume_attachments_multiattach[id-1]',
                  volumes + 'test_attach_volume_negative.AttachVolume'
                  'NegativeTest.test_x[id-1]')
        for test in first + second:
            on = [number for number, regexes in enumerate(workers)
                  if any(regex.search(test) for regex in regexes)]
            self.assertEqual([0 if test in first else 1], on, test)

    def test_the_series_tests_are_selected_and_in_its_patch(self):
        patch = next((config.ROOT / 'patches' / 'tempest').glob('0002-*'))
        defined = re.findall(r'^\+class (\w+)\(', patch.read_text(), re.M)
        for prefix in tempest.SERIES_TESTS:
            self.assertIn(prefix.split('.')[-2], defined)
            self.assertTrue(re.search('|'.join(tempest.TESTS),
                                      prefix + 'test_x'), prefix)

    def series_result(self, statuses):
        """A tempest SuiteResult: a test of another class passed, and one
        test of each series class with its status from `statuses` (passed
        when not named), or none for None.
        """
        results = {'tempest.api.compute.volumes.test_attach_volume.'
                   'AttachVolumeTestJSON.test_x': 'success'}
        for prefix in tempest.SERIES_TESTS:
            name = prefix.split('.')[-2]
            status = statuses.get(name, 'success')
            if status:
                results[prefix + 'test_x'] = status
        result = suites.SuiteResult('tempest', results=results)
        result.count()
        return tempest.series_tests_passed(result)

    def test_the_series_tests_passed(self):
        result = self.series_result({})
        self.assertEqual((4, 0, ''), (result.passed, result.failed,
                                      result.error))

    def test_a_series_test_skipped_fails(self):
        result = self.series_result({'AttachVolumeModeGuestTest': 'skip'})
        self.assertEqual((3, 1, 1), (result.passed, result.failed,
                                     result.skipped))
        self.assertIn('AttachVolumeModeGuestTest.test_x skip', result.error)

    def test_a_series_class_not_in_the_run_fails(self):
        result = self.series_result({'AttachVolumeModeMultiCreateTest': None})
        self.assertEqual(1, result.failed)
        self.assertIn('AttachVolumeModeMultiCreateTest.* ran', result.error)


class RunReportTest(unittest.TestCase):
    """The tempest and openstacksdk steps: report.json's sections, and the
    step's verdict, from the SuiteResult of the run.
    """

    def run_step(self, module, step, result):
        runner = scenario.Scenario.__new__(scenario.Scenario)
        runner.cloud = mock.Mock()
        runner.report = {'tempest': None, 'openstacksdk': None}
        with mock.patch.object(module, 'run', return_value=result):
            try:
                return getattr(runner, step)(), runner.report
            except scenario.Failed as failure:
                return failure, runner.report

    def result(self, results, error=''):
        result = suites.SuiteResult('run', results=results)
        result.count()
        if error:
            result.fail(error)
        return result

    def test_each_test_with_its_status(self):
        for module, step, section in ((tempest, 'tempest', 'tempest'),
                                      (sdk_functional, 'sdk_functional',
                                       'openstacksdk')):
            detail, report = self.run_step(module, step, self.result(
                {'m.T.test_a': 'success', 'm.T.test_b': 'success'}))
            self.assertEqual('2 passed, 0 failed, 0 skipped',
                             detail.split(': ', 1)[1])
            self.assertEqual({'m.T.test_a': 'success',
                              'm.T.test_b': 'success'},
                             report[section]['tests'])

    def test_a_run_with_an_error_and_no_failed_test_fails(self):
        for module, step, section in ((tempest, 'tempest', 'tempest'),
                                      (sdk_functional, 'sdk_functional',
                                       'openstacksdk')):
            failure, report = self.run_step(module, step, self.result(
                {'m.T.test_a': 'success'}, 'stestr exited 1 with no test '
                'failed'))
            self.assertIsInstance(failure, scenario.Failed)
            self.assertIn('stestr exited 1', str(failure))
            self.assertEqual(1, report[section]['failed'])
            self.assertEqual(['stestr exited 1 with no test failed'],
                             report[section]['failures'])

    def test_no_test_fails(self):
        for module, step in ((tempest, 'tempest'),
                             (sdk_functional, 'sdk_functional')):
            failure, _ = self.run_step(module, step, self.result({}))
            self.assertIsInstance(failure, scenario.Failed)


class SdkFunctionalTest(RootTestCase):

    def test_every_cloud_it_names_is_in_the_clouds_yaml(self):
        path = deploy.clouds_yaml()
        env = sdk_functional.environment(path)
        self.assertEqual(str(path), env['OS_CLIENT_CONFIG_FILE'])
        clouds = re.findall(r'^  (\S+):$', path.read_text(), re.M)
        named = {value for key, value in env.items()
                 if key == 'OS_CLOUD' or key.endswith('_CLOUD') or
                 key.endswith('_CLOUD_ALT')}
        self.assertEqual({'mae', 'mae-admin'}, named)
        self.assertLessEqual(named, set(clouds))
        self.assertIn(env['OPENSTACKSDK_FLAVOR'],
                      [name for name, _ in deploy.FLAVORS])


class PortsTest(RootTestCase):

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
class DatabasesTest(RootTestCase):
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


def guest_line(boot, seq, disk='vdb', serial='vol-1', ro=1):
    write = 'FAILED(Operation not permitted)' if ro else 'OK'
    return (f'guest-disk boot={boot} seq={seq} {disk} serial={serial} '
            f'ro={ro} sector=8 bypass={-5 if ro else 0} write={write}\n')


class FreshReportsTest(unittest.TestCase):
    """The scenario counts only guest rounds begun after it looked."""

    class Consoles:
        """A server whose console grows by one round at each read."""

        def __init__(self, console, rounds):
            self.text, self.rounds = console, list(rounds)

        def console(self, server_id):
            text = self.text
            if self.rounds:
                self.text += self.rounds.pop(0)
            return text

        def attachments(self, server_id):
            return [{'volumeId': 'vol-1'}]

    def fresh(self, console, rounds):
        runner = scenario.Scenario.__new__(scenario.Scenario)
        runner.cloud = self.Consoles(console, rounds)
        with mock.patch.object(scenario, 'POLL_SECONDS', 0):
            return runner.fresh_reports(['server'])['server']['vol-1']

    def test_a_round_seen_before_or_first_after_never_counts(self):
        # Rounds 5 and 6 were on the console before the call (6 may have
        # begun before the move); 7 is the first new one, 8 began after
        # it was printed.
        report = self.fresh(guest_line('aaaaaaaa', 5) +
                            guest_line('aaaaaaaa', 6),
                            [guest_line('aaaaaaaa', 7, ro=0),
                             guest_line('aaaaaaaa', 8)])
        self.assertEqual(8, report.seq)

    def test_after_a_reboot_the_rounds_of_the_new_boot(self):
        report = self.fresh(guest_line('aaaaaaaa', 40, ro=0),
                            [guest_line('bbbbbbbb', 1),
                             guest_line('bbbbbbbb', 2)])
        self.assertEqual(('bbbbbbbb', 2), (report.boot, report.seq))


class ExpectedProblemsTest(unittest.TestCase):

    ROW = {'xml_readonly': True, 'qemu_ro': True, 'guest_kernel_ro': True,
           'guest_write': 'FAILED: Operation not permitted',
           'bypass_write': 'EIO', 'rbd_changed': False,
           'rbd_by_guest': False}

    def test_read_only_everywhere(self):
        self.assertEqual([], scenario.expected_problems(self.ROW, True))

    def test_each_place_that_disagrees_is_named(self):
        row = dict(self.ROW, bypass_write='written', rbd_changed=True,
                   rbd_by_guest=True)
        self.assertEqual(['bypass_write=written', 'rbd_changed=True'],
                         scenario.expected_problems(row, True))
        writable = {'xml_readonly': False, 'qemu_ro': False,
                    'guest_kernel_ro': False, 'guest_write': 'OK',
                    'bypass_write': 'written', 'rbd_changed': True,
                    'rbd_by_guest': False}
        self.assertEqual(['the slot was written, not by this guest'],
                         scenario.expected_problems(writable, False))


class UpgradeTest(unittest.TestCase):

    def test_the_rollback_runs_the_sql_the_packagers_page_gives(self):
        page = ' '.join((config.ROOT / 'doc/source/packagers.rst')
                        .read_text().split())
        for sql in (upgrade.ROLLBACK_SQL, upgrade.API_ROLLBACK_SQL,
                    upgrade.READ_ONLY_BDMS.replace('SELECT ', '')):
            self.assertIn(' '.join(sql.split()), page)

    def test_a_started_compute_is_waited_for_until_it_reports(self):
        # Read after the stop, then while it starts: the third read is its
        # first report since.
        counts = [{'mae-compute-a': 5, 'mae-compute-b': 7},
                  {'mae-compute-a': 5, 'mae-compute-b': 7},
                  {'mae-compute-a': 6, 'mae-compute-b': 8}]
        with mock.patch.object(upgrade, 'report_counts',
                               side_effect=counts) as report_counts, \
                mock.patch.object(upgrade.services, 'start') as start, \
                mock.patch.object(upgrade.time, 'sleep'):
            upgrade.start_services(['nova-conductor', 'nova-compute-b'],
                                   admin=None)
        self.assertEqual(['nova-conductor', 'nova-compute-b'],
                         [call.args[0].name for call in start.call_args_list])
        self.assertEqual(3, report_counts.call_count)

    def test_query_rows_with_nulls(self):
        with mock.patch.object(upgrade.process, 'run') as run:
            run.return_value.stdout = 'a\tNULL\nb\t75\n'
            self.assertEqual([['a', None], ['b', '75']],
                             upgrade.query('mae_nova', 'SELECT 1'))
        self.assertEqual(['mariadb', '--protocol=socket', '-u', 'root', '-N',
                          '-B', '-e', 'SELECT 1', 'mae_nova'],
                         run.call_args.args[0])
