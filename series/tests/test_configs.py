"""Tests of series.cloud.configs: the configuration files of the cloud's
services, written in a temporary root; that each parses, and what they
tell each service.
"""

import configparser
import json
from pathlib import Path
import types
from unittest import mock

from series.cloud import configs
from series.cloud import hosts
from series.cloud import layout
from series.cloud import network
from series.cloud import services
from series.tests import base


class ConfigsTest(base.RootTestCase):

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
