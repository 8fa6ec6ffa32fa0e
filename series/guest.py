"""The real cloud's guest: a tiny bootable disk image that reports, from
inside, whether each of its virtio disks is writable.

Built from Debian's packages alone (linux-image-amd64, busybox-static,
syslinux, mtools, dosfstools): the kernel and a busybox initramfs on a FAT
disk made bootable with syslinux. The initramfs loads the virtio modules
and then, every few seconds, prints on the serial console one line per
virtio disk:

    guest-disk vdb serial=6b4164b7-fd66-4758-a ro=1 write=FAILED

`serial` is the disk's serial number (Nova sets it to the volume id,
which virtio cuts to 20 characters; `-` when it has none); `ro` is the
kernel's read-only flag of the disk (what the virtio device announced);
`write` is whether writing its last sector back succeeded after the
guest cleared that flag itself (blockdev --setrw), so a FAILED write is
the hypervisor refusing it, not the guest's kernel. The write puts back
the bytes it read: a writable disk is left unchanged.
"""

import gzip
import io
import os
from pathlib import Path
import re
import shutil
import stat
import tempfile

from series import config
from series import process

# The modules the kernel needs for virtio disks, in load order.
VIRTIO_MODULES = ('virtio_ring', 'virtio', 'virtio_pci_modern_dev',
                  'virtio_pci_legacy_dev', 'virtio_pci', 'virtio_blk')
PACKAGES = ('linux-image-amd64', 'busybox-static', 'syslinux',
            'syslinux-common', 'mtools', 'dosfstools')
IMAGE_MIB = 48
REPORT_SECONDS = 3
READY = 'guest-ready'
LINE = re.compile(r'^guest-disk (vd[a-z]+) serial=(\S+) ro=([01]) '
                  r'write=(OK|FAILED)\s*$', re.M)
SERIAL_CHARS = 20

INIT = f"""\
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in {' '.join(VIRTIO_MODULES)}; do
    insmod /modules/$module.ko 2>/dev/null
done
echo {READY}
while true; do
    for disk in /sys/block/vd*; do
        [ -e "$disk" ] || continue
        name=${{disk##*/}}
        serial=$(cat "$disk/serial" 2>/dev/null)
        ro=$(cat "$disk/ro")
        last=$(( $(cat "$disk/size") - 1 ))
        blockdev --setrw /dev/$name 2>/dev/null
        if dd if=/dev/$name of=/tmp/sector bs=512 skip=$last count=1 \\
                2>/dev/null &&
           dd if=/tmp/sector of=/dev/$name bs=512 seek=$last count=1 \\
                conv=notrunc,fsync 2>/dev/null; then
            write=OK
        else
            write=FAILED
        fi
        echo "guest-disk $name serial=${{serial:--}} ro=$ro write=$write"
    done
    sleep {REPORT_SECONDS}
done
"""

SYSLINUX_CFG = """\
DEFAULT guest
PROMPT 0
TIMEOUT 0
LABEL guest
  KERNEL vmlinuz
  INITRD initrd
  APPEND console=ttyS0 quiet panic=5
"""


def guest_dir():
    return config.ROOT / '.work' / 'cloud' / 'guest'


def kernel():
    """(vmlinuz, modules directory) of Debian's installed kernel."""
    kernels = sorted(Path('/boot').glob('vmlinuz-*'))
    for vmlinuz in reversed(kernels):
        version = vmlinuz.name.removeprefix('vmlinuz-')
        modules = Path('/lib/modules') / version / 'kernel' / 'drivers'
        if (modules / 'block' / 'virtio_blk.ko').exists():
            return vmlinuz, modules
    raise config.SeriesError(
        'no Debian kernel with virtio_blk.ko under /boot and /lib/modules: '
        f'install {" ".join(PACKAGES)}')


def module_path(drivers, name):
    found = sorted(drivers.rglob(f'{name}.ko'))
    if not found:
        raise config.SeriesError(f'kernel module {name}.ko not found under '
                                 f'{drivers}')
    return found[0]


def cpio_newc(entries):
    """An initramfs archive (cpio, newc format) of
    [(path, mode with its file type, bytes, (major, minor) of a device)].
    """
    out = io.BytesIO()
    entries = [*entries, ('TRAILER!!!', 0, b'', (0, 0))]
    for ino, (name, mode, data, rdev) in enumerate(entries, 1):
        name_bytes = name.encode() + b'\0'
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, *rdev,
                  len(name_bytes), 0]
        out.write(b'070701' + b''.join(b'%08X' % f for f in fields))
        out.write(name_bytes)
        out.write(b'\0' * (-(110 + len(name_bytes)) % 4))
        out.write(data)
        out.write(b'\0' * (-len(data) % 4))
    return out.getvalue()


def is_static(path):
    """Whether the ELF file at `path` has no program interpreter."""
    data = Path(path).read_bytes()
    if data[:4] != b'\x7fELF' or data[4] != 2:  # ELF64 only
        return False
    order = 'little' if data[5] == 1 else 'big'
    offset = int.from_bytes(data[0x20:0x28], order)
    size = int.from_bytes(data[0x36:0x38], order)
    count = int.from_bytes(data[0x38:0x3a], order)
    PT_INTERP = 3
    return all(int.from_bytes(data[offset + i * size:][:4], order)
               != PT_INTERP for i in range(count))


def initramfs(drivers):
    busybox = shutil.which('busybox') or '/bin/busybox'
    if not is_static(busybox):
        raise config.SeriesError(f'{busybox} is not statically linked: '
                                 'install busybox-static')
    directory, regular = stat.S_IFDIR | 0o755, stat.S_IFREG
    entries = [('bin', directory, b'', (0, 0)),
               ('dev', directory, b'', (0, 0)),
               # The kernel opens it for init's output before init runs.
               ('dev/console', stat.S_IFCHR | 0o600, b'', (5, 1)),
               ('modules', directory, b'', (0, 0)),
               ('bin/busybox', regular | 0o755, Path(busybox).read_bytes(),
                (0, 0)),
               ('init', regular | 0o755, INIT.encode(), (0, 0))]
    for name in VIRTIO_MODULES:
        entries.append((f'modules/{name}.ko', regular | 0o644,
                        module_path(drivers, name).read_bytes(), (0, 0)))
    return gzip.compress(cpio_newc(entries), mtime=0)


def build(path=None):
    """Build the guest image (raw) at `path`; return the path."""
    path = Path(path or guest_dir() / 'guest.img')
    for tool in ('syslinux', 'mcopy', 'mkfs.fat', 'busybox'):
        if not shutil.which(tool):
            raise config.SeriesError(f'{tool} is missing: install '
                                     f'{" ".join(PACKAGES)}')
    vmlinuz, drivers = kernel()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        image = Path(tmp) / 'guest.img'
        with open(image, 'wb') as f:
            f.truncate(IMAGE_MIB << 20)
        process.run(['mkfs.fat', '-n', 'GUEST', image])
        process.run(['syslinux', '--install', image])
        files = {'vmlinuz': vmlinuz.read_bytes(),
                 'initrd': initramfs(drivers),
                 'syslinux.cfg': SYSLINUX_CFG.encode()}
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
            process.run(['mcopy', '-i', image, Path(tmp) / name,
                         f'::{name}'], env={'MTOOLS_SKIP_CHECK': '1'})
        os.replace(image, path)
    return path


def verdicts(console):
    """{disk: (serial, ro, write)} from the guest's latest line for each
    disk since it last booted.
    """
    found = {}
    since_boot = console.rsplit(READY, 1)[-1]
    for disk, serial, ro, write in LINE.findall(since_boot):
        found[disk] = (serial, ro == '1', write)
    return found
