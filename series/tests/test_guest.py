"""Tests of series.cloud.guest: the real cloud's guest, booted under QEMU.

The boot tests need Debian's qemu-system-x86, linux-image-amd64,
busybox-static, syslinux, mtools and dosfstools, and the SSH test also
dropbear-bin, openssh-client and genisoimage (tools/setup-test-host
installs them for CI).
"""

import hashlib
import json
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from series.cloud import guest
from series.tests import base

TOOLS = ('qemu-system-x86_64', 'syslinux', 'mcopy', 'mkfs.fat', 'busybox')
MISSING = [tool for tool in TOOLS if not shutil.which(tool)]
SSH_TOOLS = ('ssh', 'ssh-keygen', 'genisoimage', 'dropbear')
SSH_MISSING = [tool for tool in (*TOOLS, *SSH_TOOLS)
               if not shutil.which(tool, path='/usr/sbin:/usr/bin:/bin')]


def line(boot, seq, disk, ro=0, bypass=0, write='OK', serial='-'):
    return (f'guest-disk boot={boot} seq={seq} {disk} serial={serial} '
            f'ro={ro} sector=2093056 bypass={bypass} write={write}\r\n')


class ReportsTest(unittest.TestCase):

    def test_fields_of_a_line(self):
        [report] = guest.reports(line(
            '3f2a9c1b', 12, 'vdb', ro=1, bypass=-5,
            write='FAILED(Operation not permitted)',
            serial='6b4164b7-fd66-4758-a'))
        self.assertEqual(guest.Report(
            '3f2a9c1b', 12, 'vdb', '6b4164b7-fd66-4758-a', True, 2093056,
            -5, 'FAILED', 'Operation not permitted'), report)
        self.assertEqual('EIO', report.bypass_text)
        self.assertEqual('written', guest.reports(line(
            '3f2a9c1b', 1, 'vda'))[0].bypass_text)

    def test_a_bypass_write_that_logged_no_result(self):
        console = (line('aaaaaaaa', 3, 'vdb', bypass=0) +
                   'guest-bypass-missing tag=aaaaaaaa-4-vdb insmod: '
                   "can't insert '/modules/guest_write.ko': Cannot "
                   'allocate memory \r\n' +
                   line('aaaaaaaa', 4, 'vdb', bypass='none'))
        self.assertEqual('missing', guest.reports(console)[1].bypass_text)
        self.assertIsNone(guest.reports(console)[1].bypass)
        # Such a round says nothing: the last complete one stands.
        self.assertEqual(3, guest.latest(console)['vdb'].seq)
        self.assertEqual({}, guest.latest(console, after=('aaaaaaaa', 3)))
        self.assertEqual(
            {'aaaaaaaa-4-vdb': "insmod: can't insert "
             "'/modules/guest_write.ko': Cannot allocate memory"},
            guest.missing(console))

    def test_latest_line_per_disk_of_the_latest_boot(self):
        console = (line('aaaaaaaa', 7, 'vdc') +
                   'guest-ready boot=bbbbbbbb uuid=x\r\n' +
                   line('bbbbbbbb', 1, 'vda') +
                   line('bbbbbbbb', 1, 'vdb', ro=1) +
                   'garbage ' + line('bbbbbbbb', 2, 'vdc') +
                   line('bbbbbbbb', 2, 'vdb', ro=1, bypass=-5,
                        write='FAILED(Operation not permitted)'))
        found = guest.latest(console)
        self.assertEqual(['vda', 'vdb'], sorted(found))
        self.assertEqual((1, 2), (found['vda'].seq, found['vdb'].seq))
        self.assertEqual('FAILED', found['vdb'].write)

    def test_rounds_up_to_a_mark_do_not_count(self):
        console = (line('bbbbbbbb', 4, 'vda') + line('bbbbbbbb', 5, 'vda') +
                   line('bbbbbbbb', 5, 'vdb'))
        self.assertEqual({'vda': 5, 'vdb': 5}, {
            disk: report.seq for disk, report in guest.latest(
                console, after=('bbbbbbbb', 4)).items()})
        self.assertEqual({}, guest.latest(console, after=('bbbbbbbb', 5)))
        # After a reboot every round of the new boot counts.
        self.assertEqual(['vda'], list(guest.latest(
            console + line('cccccccc', 1, 'vda'),
            after=('bbbbbbbb', 5))))

    def test_kernel_faults_each_once(self):
        console = ('[    1.000000] virtio_blk virtio1: [vda] 98304 512-byte '
                   'logical blocks\r\n'
                   '[  544.855880] general protection fault, probably for '
                   'non-canonical address 0x2d646c6975622e75\r\n'
                   '[  544.855880] RIP: 0010:ftrace_release_mod+0x107/0x2a0'
                   '\r\n'
                   '[  544.862460] RIP: 0010:ftrace_release_mod+0x107/0x2a0'
                   '\r\n'
                   '[  600.000000] BUG: kernel NULL pointer dereference\r\n'
                   '[  601.000000] kernel BUG at lib/list_debug.c:62!\r\n')
        self.assertEqual(
            ['general protection fault, probably for non-canonical address '
             '0x2d646c6975622e75', 'RIP: 0010:ftrace_release_mod+0x107/0x2a0',
             'BUG: kernel NULL pointer dereference',
             'kernel BUG at lib/list_debug.c:62!'],
            guest.kernel_faults(console))
        self.assertEqual([], guest.kernel_faults(line('aaaaaaaa', 1, 'vda')))

    def test_silence_of_a_guest_that_printed_nothing(self):
        self.assertEqual('no round printed', guest.silence('booting\r\n'))
        self.assertEqual('last round boot=aaaaaaaa seq=2', guest.silence(
            line('aaaaaaaa', 1, 'vda') + line('aaaaaaaa', 2, 'vda')))

    def test_slot_matches_the_init_script(self):
        # The 2030th two-sector slot of the last 4096 sectors.
        self.assertEqual((1 << 30) // 512 - 4096 + 2 * 2029,
                         guest.slot_sector(2029, 1 << 30))
        self.assertIn('sector=$(( $(cat "$disk/size") - '
                      f'{guest.SLOT_REGION} + 2 * slot ))', guest.INIT)
        # Without a slot on its config drive: 0xfed % 2048.
        self.assertEqual(2029, guest.uuid_slot(
            'fedcba98-0000-0000-0000-000000000000'))
        self.assertIn('slot=${slot:-$(( 0x${uuid:0:3} % '
                      f'{guest.SLOTS} ))}}', guest.INIT)


class StaticTest(unittest.TestCase):

    def test_dynamic_and_not_elf(self):
        # The initramfs has no libc: a dynamically linked busybox would
        # not start in it.
        self.assertFalse(guest.is_static(sys.executable))
        self.assertFalse(guest.is_static(__file__))


class LoadOrderTest(unittest.TestCase):

    MODULES_DEP = (
        'kernel/fs/isofs/isofs.ko: kernel/drivers/cdrom/cdrom.ko\n'
        'kernel/drivers/cdrom/cdrom.ko:\n'
        'kernel/drivers/scsi/sr_mod.ko: kernel/drivers/scsi/scsi_mod.ko '
        'kernel/drivers/scsi/scsi_common.ko kernel/drivers/cdrom/cdrom.ko\n'
        'kernel/drivers/scsi/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko'
        '\n'
        'kernel/drivers/scsi/scsi_common.ko:\n')

    def test_each_module_after_those_it_needs_once(self):
        self.assertEqual(
            ['kernel/drivers/cdrom/cdrom.ko',
             'kernel/drivers/scsi/scsi_common.ko',
             'kernel/drivers/scsi/scsi_mod.ko',
             'kernel/drivers/scsi/sr_mod.ko', 'kernel/fs/isofs/isofs.ko'],
            guest.load_order(self.MODULES_DEP, ('sr_mod', 'isofs')))

    def test_unknown_module(self):
        self.assertRaisesRegex(Exception, 'virtio_net.ko is not in',
                               guest.load_order, self.MODULES_DEP,
                               ('virtio_net',))


class LibrariesTest(unittest.TestCase):

    def test_libraries_and_loader_of_ldd_output(self):
        output = (
            '\tlinux-vdso.so.1 (0x00007ffd)\n'
            '\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f11)\n'
            '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f12)\n'
            '\t/lib64/ld-linux-x86-64.so.2 (0x00007f13)\n')
        self.assertEqual(['/lib/x86_64-linux-gnu/libz.so.1',
                          '/lib/x86_64-linux-gnu/libc.so.6',
                          '/lib64/ld-linux-x86-64.so.2'],
                         guest.shared_libraries(output))

    def test_parent_directories_first_and_each_path_once(self):
        regular = 0o100644
        entries = guest.with_directories([
            ('root', 0o40700, b'', (0, 0)),
            ('root/.ssh/authorized_keys', regular, b'key', (0, 0)),
            ('lib/a.so', regular, b'a', (0, 0)),
            ('lib/a.so', regular, b'again', (0, 0))])
        self.assertEqual(
            [('root', 0o40700), ('root/.ssh', 0o40755),
             ('root/.ssh/authorized_keys', regular), ('lib', 0o40755),
             ('lib/a.so', regular)],
            [(name, mode) for name, mode, _, _ in entries])


class CpioTest(unittest.TestCase):

    @unittest.skipUnless(shutil.which('cpio'), 'cpio is not installed')
    def test_cpio_reads_the_archive(self):
        archive = guest.cpio_newc([
            ('dev', 0o40755, b'', (0, 0)),
            ('dev/console', 0o20600, b'', (5, 1)),
            ('init', 0o100755, b'#!/bin/sh\n', (0, 0))])
        listing = subprocess.run(['cpio', '-itv', '--quiet'], input=archive,
                                 capture_output=True, check=True).stdout
        lines = listing.decode().splitlines()
        self.assertEqual(['dev', 'dev/console', 'init'],
                         [line.split()[-1] for line in lines])
        self.assertTrue(lines[1].startswith('crw-------'))
        self.assertIn('5,', lines[1])


@unittest.skipIf(MISSING, f'missing {", ".join(MISSING)} (tools/'
                 'setup-test-host installs them)')
class BootTest(unittest.TestCase):
    """The guest under QEMU with a read-only and a writable disk: what
    the guest kernel says, what QEMU does with a write that passes the
    guest kernel, and what reaches each disk's file.
    """

    UUID = '0a1b2c3d-4e5f-4061-8273-948596a7b8c9'

    def test_guest_reports_each_disk(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            image = guest.build(tmp / 'guest.img')
            size = 8 << 20
            (tmp / 'ro.img').write_bytes(b'\x5a' * size)
            (tmp / 'rw.img').write_bytes(b'\x5a' * size)
            console = tmp / 'console.log'
            qemu = subprocess.Popen([
                'qemu-system-x86_64', '-machine', 'pc,accel=tcg', '-m', '128',
                '-uuid', self.UUID,
                '-nographic', '-no-reboot', '-monitor', 'none',
                '-serial', f'file:{console}',
                '-drive', f'file={image},format=raw,if=none,id=boot,'
                'snapshot=on',
                '-device', 'virtio-blk-pci,drive=boot,bootindex=0',
                '-drive', f'file={tmp / "ro.img"},format=raw,if=none,'
                'id=ro,readonly=on',
                '-device', 'virtio-blk-pci,drive=ro,serial=read-only-disk',
                '-drive', f'file={tmp / "rw.img"},format=raw,if=none,id=rw',
                '-device', 'virtio-blk-pci,drive=rw,'
                'serial=0123456789abcdef0123456789'],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.addCleanup(qemu.wait)
            self.addCleanup(qemu.kill)
            deadline = time.monotonic() + 120
            found = {}
            # A second round of each disk: the module loaded at boot
            # serves every round's write.
            while time.monotonic() < deadline and (
                    len(found) < 3 or
                    min(report.seq for report in found.values()) < 2):
                time.sleep(1)
                if console.exists():
                    found = guest.latest(console.read_text(errors='replace'))
            qemu.kill()
            self.assertEqual(
                {'vda': ('-', False, 'OK', '', 'written'),
                 'vdb': ('read-only-disk', True, 'FAILED',
                         'Operation not permitted', 'EIO'),
                 'vdc': ('0123456789abcdef0123', False, 'OK', '',
                         'written')},
                {disk: (report.serial, report.ro, report.write,
                        report.error, report.bypass_text)
                 for disk, report in found.items()})
            # No config drive: the slot from the instance UUID.
            slot = guest.uuid_slot(self.UUID)
            sector = guest.slot_sector(slot, size)
            self.assertEqual(
                [guest.slot_sector(slot, guest.IMAGE_MIB << 20),
                 sector, sector],
                [found[disk].sector for disk in ('vda', 'vdb', 'vdc')])
            # QEMU refused both writes to the read-only disk: its file
            # is as it was. Both reached the writable one.
            self.assertEqual(b'\x5a' * size, (tmp / 'ro.img').read_bytes())
            written = (tmp / 'rw.img').read_bytes()
            mark = guest.marker(self.UUID)
            for offset, via in ((0, b'via=write'), (1, b'via=bio')):
                data = written[(sector + offset) * 512:][:512]
                self.assertTrue(data.startswith(mark), data[:80])
                self.assertIn(via, data)
            self.assertEqual(b'\x5a' * (sector * 512),
                             written[:sector * 512])


@unittest.skipIf(SSH_MISSING, f'missing {", ".join(SSH_MISSING)} (tools/'
                 'setup-test-host installs them)')
class SshTest(unittest.TestCase):
    """The guest as tempest's SSH checks find it in the cloud: its address
    and key from a config drive as Nova writes it (a CD-ROM on the SATA
    bus of the q35 machine), the commands tempest runs over SSH.
    """

    MAC = '52:54:00:12:34:56'

    def config_drive(self, tmp, public_key):
        latest = tmp / 'drive' / 'openstack' / 'latest'
        latest.mkdir(parents=True)
        # As Nova writes it for the second server of a create_servers()
        # request given slot 40.
        (latest / 'meta_data.json').write_text(json.dumps({
            'uuid': BootTest.UUID, 'public_keys': {'key': public_key},
            'meta': {guest.SLOT_KEY: '40'}, 'launch_index': 1}))
        # QEMU's user network gives the guest 10.0.2.15 as Neutron would.
        (latest / 'network_data.json').write_text(json.dumps({
            'links': [{'id': 'tap1', 'type': 'macvtap', 'mtu': 1500,
                       'ethernet_mac_address': self.MAC}],
            'networks': [{'id': 'network0', 'type': 'ipv4', 'link': 'tap1',
                          'ip_address': '10.0.2.15',
                          'netmask': '255.255.255.0',
                          'routes': [{'network': '0.0.0.0',
                                      'netmask': '0.0.0.0',
                                      'gateway': '10.0.2.2'}]}],
            'services': []}))
        subprocess.run(['genisoimage', '-quiet', '-o', tmp / 'drive.iso',
                        '-V', 'config-2', '-J', '-r', tmp / 'drive'],
                       check=True)
        return tmp / 'drive.iso'

    def ssh(self, tmp, port, command):
        return subprocess.run(
            ['ssh', '-i', tmp / 'key', '-p', str(port), '-o', 'BatchMode=yes',
             '-o', 'StrictHostKeyChecking=no', '-o',
             'UserKnownHostsFile=/dev/null', '-o', 'ConnectTimeout=5',
             '-o', 'LogLevel=ERROR', 'root@127.0.0.1',
             # What tempest puts before each command (ssh_shell_prologue).
             'set -eu -o pipefail; PATH=$PATH:/sbin:/usr/sbin; ' + command],
            capture_output=True, text=True, timeout=60)

    def test_tempest_commands_over_ssh(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            image = guest.build(tmp / 'guest.img')
            subprocess.run(['ssh-keygen', '-q', '-t', 'ecdsa', '-b', '384',
                            '-N', '', '-f', tmp / 'key'], check=True)
            drive = self.config_drive(tmp, (tmp / 'key.pub').read_text())
            size = 8 << 20
            for name in ('ro', 'rw'):
                (tmp / f'{name}.img').write_bytes(b'\x5a' * size)
            port = base.free_port()
            qemu = subprocess.Popen([
                'qemu-system-x86_64', '-machine', 'q35,accel=tcg', '-m', '256',
                '-uuid', BootTest.UUID, '-nographic', '-no-reboot',
                '-monitor', 'none', '-serial', f'file:{tmp / "console.log"}',
                '-drive', f'file={image},format=raw,if=none,id=boot,'
                'snapshot=on',
                '-device', 'virtio-blk-pci,drive=boot,bootindex=0',
                '-drive', f'file={drive},format=raw,if=none,id=drive,'
                'media=cdrom,readonly=on', '-device', 'ide-cd,drive=drive',
                '-drive', f'file={tmp / "ro.img"},format=raw,if=none,id=ro,'
                'readonly=on', '-device', 'virtio-blk-pci,drive=ro',
                '-drive', f'file={tmp / "rw.img"},format=raw,if=none,id=rw',
                '-device', 'virtio-blk-pci,drive=rw',
                '-netdev', f'user,id=net,hostfwd=tcp:127.0.0.1:{port}-:22',
                '-device', f'virtio-net-pci,netdev=net,mac={self.MAC}'],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.addCleanup(qemu.wait)
            self.addCleanup(qemu.kill)
            deadline = time.monotonic() + 120
            while self.ssh(tmp, port, 'true').returncode != 0:
                if time.monotonic() > deadline:
                    self.fail('no SSH in 120 s; the console:\n' + (
                        tmp / 'console.log').read_text(errors='replace'))
                time.sleep(2)
            listing = self.ssh(tmp, port, 'lsblk -lb --nodeps').stdout
            # NAME MAJ:MIN RM SIZE RO TYPE MOUNTPOINTS
            self.assertEqual(
                {'vda': 'disk', 'vdb': 'disk', 'vdc': 'disk', 'sr0': 'rom'},
                {line.split()[0]: line.split()[5]
                 for line in listing.splitlines()[1:]})
            self.assertEqual(['1', '0'], [self.ssh(
                tmp, port, f'cat /sys/block/{disk}/ro').stdout.strip()
                for disk in ('vdb', 'vdc')])
            write = ('sudo dd if=/dev/urandom of=/dev/{} bs=1M count=1 '
                     'oflag=direct')
            refused = self.ssh(tmp, port, write.format('vdb'))
            self.assertNotEqual(0, refused.returncode)
            self.assertIn("dd: error writing '/dev/vdb': Operation not "
                          "permitted", refused.stderr)
            self.assertEqual(0, self.ssh(tmp, port,
                                         write.format('vdc')).returncode)
            checksum = ('sudo dd if=/dev/{} bs=1M count=1 iflag=direct '
                        '2>/dev/null | md5sum')
            sums = [self.ssh(tmp, port, checksum.format(disk)).stdout
                    for disk in ('vdb', 'vdc')]
            # The guest's rounds write the slot its config drive gives.
            rounds = guest.latest((tmp / 'console.log').read_text(
                errors='replace'))
            qemu.kill()
            self.assertEqual(guest.slot_sector(41, size),
                             rounds['vdc'].sector)
            self.assertEqual(b'\x5a' * size, (tmp / 'ro.img').read_bytes())
            written = (tmp / 'rw.img').read_bytes()
            self.assertTrue(written[guest.slot_sector(41, size) * 512:]
                            .startswith(guest.marker(BootTest.UUID)))
            self.assertNotEqual(b'\x5a' * (1 << 20), written[:1 << 20])
            self.assertEqual([hashlib.md5(b'\x5a' * (1 << 20)).hexdigest(),
                              hashlib.md5(written[:1 << 20]).hexdigest()],
                             [output.split()[0] for output in sums])
