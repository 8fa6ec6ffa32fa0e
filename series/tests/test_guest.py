"""Tests of series.guest: the real cloud's guest, booted under QEMU.

The boot test needs Debian's qemu-system-x86, linux-image-amd64,
busybox-static, syslinux, mtools and dosfstools (tools/setup-test-host
installs them for CI).
"""

from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from series import guest

TOOLS = ('qemu-system-x86_64', 'syslinux', 'mcopy', 'mkfs.fat', 'busybox')
MISSING = [tool for tool in TOOLS if not shutil.which(tool)]


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

    def test_slot_matches_the_init_script(self):
        uuid = 'fedcba98-0000-0000-0000-000000000000'
        # 0xfed % 2048 = 2029: the 2030th two-sector slot of the last
        # 4096 sectors.
        self.assertEqual((1 << 30) // 512 - 4096 + 2 * 2029,
                         guest.slot_sector(uuid, 1 << 30))
        self.assertIn(f'slot=$(( 0x${{uuid:0:3}} % {guest.SLOTS} ))',
                      guest.INIT)


class StaticTest(unittest.TestCase):

    def test_dynamic_and_not_elf(self):
        # The initramfs has no libc: a dynamically linked busybox would
        # not start in it.
        self.assertFalse(guest.is_static(sys.executable))
        self.assertFalse(guest.is_static(__file__))


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
            while time.monotonic() < deadline and len(found) < 3:
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
            sector = guest.slot_sector(self.UUID, size)
            self.assertEqual(
                [guest.slot_sector(self.UUID, guest.IMAGE_MIB << 20),
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
