"""Tests of series.cloud.hosts: the two compute hosts' namespaces and
libvirt configuration. The namespace test starts real mount and UTS
namespaces (it needs root, as the cloud does).
"""

import os
from pathlib import Path
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from series.cloud import hosts
from series import config


class HostsTestCase(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        patcher = mock.patch.object(config, 'ROOT', Path(tmp.name))
        patcher.start()
        self.addCleanup(patcher.stop)
        with mock.patch.object(hosts.subprocess, 'run'):
            for host in hosts.HOSTS:
                hosts.prepare(host)


class PrepareTest(HostsTestCase):

    def test_each_libvirtd_its_address_and_host_uuid(self):
        confs = [(host.directory / 'etc' / 'libvirtd.conf').read_text()
                 for host in hosts.HOSTS]
        for host, conf in zip(hosts.HOSTS, confs):
            self.assertIn(f'listen_addr = "{host.address}"', conf)
            self.assertIn(f'host_uuid = "{host.uuid()}"', conf)
            self.assertIn(f'migration_address = "{host.address}"',
                          (host.directory / 'etc' / 'qemu.conf').read_text())
        # The same UUID on both makes libvirt refuse the migration.
        self.assertEqual(2, len({host.uuid() for host in hosts.HOSTS}))
        self.assertEqual([host.uuid() for host in hosts.HOSTS],
                         [host.uuid() for host in hosts.HOSTS])

    def test_paths_inside_a_host_on_the_machine(self):
        host = hosts.HOSTS[1]
        self.assertEqual(host.directory / 'run' / 'qemu' / 'x.pid',
                         host.path('/run/libvirt/qemu/x.pid'))
        self.assertEqual(host.directory / 'compute' / 'instances',
                         host.path(hosts.compute_state() / 'instances'))
        self.assertEqual(Path('/etc/passwd'), host.path('/etc/passwd'))

    def test_a_pid_file_naming_another_process_is_not_a_qemu(self):
        host = hosts.HOSTS[0]
        (host.directory / 'run' / 'qemu').mkdir(parents=True)
        (host.directory / 'run' / 'qemu' / 'instance-1.pid').write_text(
            str(os.getpid()))
        self.assertEqual({}, hosts.qemu_pids(host))


@unittest.skipUnless(os.geteuid() == 0, 'namespaces need root (the cloud '
                     'and CI run as root)')
@unittest.skipUnless(shutil.which('libvirtd'), 'libvirt is not installed '
                     '(tools/setup-test-host --cloud installs it)')
class NamespaceTest(HostsTestCase):

    def setUp(self):
        super().setUp()
        hosts.make_mount_points()

    def test_a_host_sees_its_own_directories_and_name(self):
        host = hosts.HOSTS[0]
        (host.directory / 'compute' / 'instances' / 'mark').write_text('a')
        machine_hosts = Path('/etc/hosts').read_text()
        machine_name = subprocess.run(['hostname'], text=True, check=True,
                                      stdout=subprocess.PIPE).stdout
        seen = subprocess.run(host.namespaced(
            'sh', '-c', 'hostname; cat /etc/hosts; '
            'cat /etc/libvirt/libvirtd.conf; '
            f'ls {hosts.compute_state() / "instances"}; echo $$'),
            text=True, check=True, stdout=subprocess.PIPE).stdout
        self.assertTrue(seen.startswith(f'{host.name}\n'), seen)
        self.assertIn(f'{host.address} {host.name}\n', seen)
        self.assertIn(f'host_uuid = "{host.uuid()}"', seen)
        self.assertIn('\nmark\n', seen)
        # Nothing leaked to the machine.
        self.assertEqual(machine_hosts, Path('/etc/hosts').read_text())
        self.assertEqual(machine_name, subprocess.run(
            ['hostname'], text=True, check=True,
            stdout=subprocess.PIPE).stdout)
        self.assertEqual([], list(hosts.compute_state().iterdir()))

    def test_the_command_keeps_the_pid_it_was_started_with(self):
        host = hosts.HOSTS[1]
        proc = subprocess.Popen(host.namespaced('sh', '-c', 'echo $$'),
                                text=True, stdout=subprocess.PIPE)
        self.assertEqual(str(proc.pid), proc.communicate()[0].strip())


class NewMachineTest(HostsTestCase):

    def test_a_libvirtd_that_does_not_answer_is_no_empty_host(self):
        bin_dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, bin_dir)
        (bin_dir / 'virsh').write_text(
            '#!/bin/sh\necho "failed to connect" >&2\nexit 1\n')
        (bin_dir / 'virsh').chmod(0o755)
        with mock.patch.dict(os.environ, {'PATH': str(bin_dir)}):
            # `cloud down` goes on without it...
            self.assertEqual([], hosts.domains(hosts.HOSTS[0]))
            # ...a check of what a host keeps does not.
            with self.assertRaisesRegex(config.SeriesError,
                                        'failed to connect'):
                hosts.domains(hosts.HOSTS[0], check=True)

    def test_without_libvirt_installed_no_host_has_a_domain(self):
        # `cloud down` (and `cloud upgrade`, which starts with it) on a
        # machine the cloud never ran on: no virsh on the PATH yet.
        with mock.patch.dict(os.environ, {'PATH': tempfile.gettempdir()}):
            self.assertEqual([], hosts.remove_domains(hosts.HOSTS[0]))
            # A check of what a host keeps needs virsh to ask libvirtd.
            with self.assertRaisesRegex(config.SeriesError, 'no virsh'):
                hosts.domains(hosts.HOSTS[0], check=True)
