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


class VerdictsTest(unittest.TestCase):

    def test_latest_line_per_disk_since_boot(self):
        console = ('SeaBIOS\r\nguest-ready\r\n'
                   'guest-disk vdc serial=old ro=0 write=OK\r\n'
                   'guest-ready\r\n'
                   'guest-disk vda serial=- ro=0 write=OK\r\n'
                   'guest-disk vdb serial=0123 ro=0 write=OK\r\n'
                   'garbage guest-disk vdc serial=x ro=1 write=FAILED\r\n'
                   'guest-disk vdb serial=0123 ro=1 write=FAILED\r\n')
        self.assertEqual({'vda': ('-', False, 'OK'),
                          'vdb': ('0123', True, 'FAILED')},
                         guest.verdicts(console))


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
    """The guest's own verdict on a read-only and a writable disk."""

    def test_guest_reports_each_disk(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            image = guest.build(tmp / 'guest.img')
            with open(tmp / 'ro.img', 'wb') as f:
                f.truncate(8 << 20)
            (tmp / 'rw.img').write_bytes(b'\x5a' * (8 << 20))
            console = tmp / 'console.log'
            qemu = subprocess.Popen([
                'qemu-system-x86_64', '-machine', 'pc,accel=tcg', '-m', '128',
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
                    found = guest.verdicts(
                        console.read_text(errors='replace'))
            self.assertEqual({'vda': ('-', False, 'OK'),
                              'vdb': ('read-only-disk', True, 'FAILED'),
                              'vdc': ('0123456789abcdef0123', False, 'OK')},
                             found)
            # The writes put back what they read.
            self.assertEqual(b'\x5a' * (8 << 20),
                             (tmp / 'rw.img').read_bytes())
