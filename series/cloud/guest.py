"""The real cloud's guest: a tiny bootable disk image that tries, from
inside, to write to each of its virtio disks, and reports what stopped
each write.

Built from Debian's packages alone (linux-image-amd64 and the headers of
the same kernel, busybox-static, syslinux, mtools, dosfstools): the
kernel and a busybox initramfs on a FAT disk made bootable with syslinux.
The initramfs loads the virtio modules and then, every few seconds (a
round, numbered `seq` since the boot `boot`), prints on the serial
console one line per virtio disk:

    guest-disk boot=3f2a9c1b seq=12 vdb serial=6b4164b7-fd66-4758-a ro=1
        sector=2093056 bypass=-5 write=FAILED(Operation not permitted)

(one line on the console). Each field proves one thing, and no more:

* `ro` is the guest kernel's read-only flag of the disk, which the
  virtio device announced: what the hypervisor *said*.
* `write` is a write(2) of one sector (O_DIRECT) at `sector`, with the
  error text when it fails. On a disk whose `ro` is 1 the guest kernel
  refuses it ("Operation not permitted") before the hypervisor sees it;
  since Linux 5.12 the guest cannot clear a flag the driver set, so this
  is the guest kernel's verdict, not QEMU's.
* `bypass` is the errno (0: written) of a write of the next sector that
  does not pass the guest kernel's read-only check: a bio submitted by a
  kernel module built for the guest's kernel (guest_write.c, loaded once
  at boot and asked for each write through its parameter), which the
  block layer lets through with a warning. -5 (EIO) on a disk whose `ro`
  is 1 is QEMU refusing the write; 0 would be QEMU writing it. `none`
  when the module logged no result (it is not loaded, or refused the
  request): the guest then prints `guest-bypass-missing tag=... ` with
  insmod's and the request's errors, and the round says nothing about
  that disk's bypass write (latest() leaves it out).

Neither says whether the volume's data changed: the host checks that
itself, in the volume's RBD image. So that it can, each guest writes only
in a slot of its own near the end of the disk (two sectors chosen from
the instance UUID, which the guest reads from its SMBIOS data), and the
bytes it writes name the instance, boot and round.

A server with a port and a config drive (Nova's, ISO 9660 on the CD-ROM
drive) is also reachable over SSH, as tempest's validation needs: the
guest takes its port's address from network_data.json and the keys from
meta_data.json, and runs Debian's dropbear (keys only); Debian's lsblk
and a `sudo` that just runs its command (the guest has only root) are
there for tempest's commands.

`serial` is the disk's serial number (Nova sets it to the volume id,
which virtio cuts to 20 characters; `-` when it has none). `boot` is the
start of the guest's boot id and `seq` counts rounds since that boot:
a line printed before a reboot or a move is told apart from one after.
"""

import dataclasses
import errno
import gzip
import hashlib
import io
import os
from pathlib import Path
import re
import shutil
import stat
import tempfile

from series import config
from series import process

# The modules the guest loads (with those they need, from the kernel's
# modules.dep): virtio disks and network card, and the CD-ROM drive of
# Nova's config drive (IDE on the pc machine type, SATA on q35).
BOOT_MODULES = ('virtio_pci', 'virtio_blk', 'virtio_net', 'ata_piix', 'ahci',
                'sr_mod', 'isofs')
# What tempest runs in the guest over SSH, copied from this machine with
# the shared libraries they load.
PROGRAMS = {'bin/dropbear': '/usr/sbin/dropbear',
            'bin/lsblk': '/usr/bin/lsblk'}
WRITE_MODULE = Path(__file__).with_name('guest_write.c')
PACKAGES = ('linux-image-amd64', 'linux-headers-<kernel version>',
            'busybox-static', 'syslinux', 'syslinux-common', 'mtools',
            'dosfstools', 'gcc', 'make', 'dropbear-bin', 'util-linux')
IMAGE_MIB = 48
REPORT_SECONDS = 3
# Where the guest asks guest_write.ko for a write (guest_write.c).
BYPASS_PARAMETER = '/sys/module/guest_write/parameters/write'
SERIAL_CHARS = 20
SECTOR = 512
# Each guest writes two sectors in the last SLOT_REGION sectors of a disk,
# at the slot its config drive gives: the server's metadata SLOT_KEY plus
# its launch index (a multi-create gives each server its own). A guest
# without one (tempest's) takes its instance UUID's first three hex
# digits modulo SLOTS, which two servers may share.
SLOT_REGION = 4096
SLOTS = SLOT_REGION // 2
SLOT_KEY = 'mae-slot'
LINE = re.compile(
    r'^guest-disk boot=(?P<boot>[0-9a-f]{8}) seq=(?P<seq>\d+) '
    r'(?P<disk>vd[a-z]+) serial=(?P<serial>\S+) ro=(?P<ro>[01]) '
    r'sector=(?P<sector>\d+) bypass=(?P<bypass>-?\d+|none) '
    r'write=(?P<write>OK|FAILED)(?:\((?P<error>[^)\r\n]*)\))?\s*$', re.M)

INIT = f"""\
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in $(cat /modules/order); do
    insmod /modules/$module.ko 2>/dev/null
done
insmod /modules/guest_write.ko 2>/tmp/insmod
# Nova's config drive, when the server has one: the slot the scenario
# gave the server; the SSH keys and the address of the server's port, for
# tempest's SSH validation.
mkdir -p /config
for cdrom in /dev/sr0 /dev/sr1; do
    mount -t iso9660 -o ro $cdrom /config 2>/dev/null && break
done
latest=/config/openstack/latest
slot=
if [ -f $latest/meta_data.json ]; then
    slot=$(sed -n 's/.*"{SLOT_KEY}": *"\\([0-9]*\\)".*/\\1/p' \\
        $latest/meta_data.json)
    index=$(sed -n 's/.*"launch_index": *\\([0-9]*\\).*/\\1/p' \\
        $latest/meta_data.json)
    [ -n "$slot" ] && slot=$(( (slot + ${{index:-0}}) % {SLOTS} ))
    value() {{
        grep -o "\\"$1\\": *\\"[^\\"]*\\"" $latest/network_data.json |
            head -n 1 | sed 's/.*: *"//; s/"$//'
    }}
    mac=$(value ethernet_mac_address)
    address=$(value ip_address)
    for nic in /sys/class/net/*; do
        [ -n "$mac" ] && [ "$(cat $nic/address)" = "$mac" ] || continue
        ifconfig ${{nic##*/}} $address netmask $(value netmask) up
    done
    grep -oE '(ssh|ecdsa)-[a-z0-9-]+ [A-Za-z0-9+/=]+' \\
        $latest/meta_data.json > /root/.ssh/authorized_keys
    chmod 600 /root/.ssh/authorized_keys
    # Keys only (-s); host keys made at the first connection (-R).
    dropbear -R -s -p 22 -P /tmp/dropbear.pid
    echo "guest-network mac=${{mac:--}} address=${{address:--}}" \\
         "keys=$(wc -l < /root/.ssh/authorized_keys)"
fi
boot=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
uuid=$(cat /sys/class/dmi/id/product_uuid 2>/dev/null)
uuid=${{uuid:-00000000-0000-0000-0000-000000000000}}
slot=${{slot:-$(( 0x${{uuid:0:3}} % {SLOTS} ))}}
echo "guest-ready boot=$boot uuid=$uuid slot=$slot"
seq=0
while true; do
    seq=$((seq + 1))
    for disk in /sys/block/vd*; do
        [ -e "$disk" ] || continue
        name=${{disk##*/}}
        serial=$(cat "$disk/serial" 2>/dev/null)
        ro=$(cat "$disk/ro")
        sector=$(( $(cat "$disk/size") - {SLOT_REGION} + 2 * slot ))
        mark="mae-write,uuid=$uuid,boot=$boot,seq=$seq,disk=$name"
        printf '%-511s\\n' "$mark,via=write" > /tmp/sector
        if dd if=/tmp/sector of=/dev/$name bs={SECTOR} seek=$sector \\
                count=1 oflag=direct conv=notrunc 2>/tmp/error; then
            write=OK
        else
            error=$(grep -m 1 'dd: ' /tmp/error)
            write="FAILED(${{error##*: }})"
        fi
        tag=$boot-$seq-$name
        echo "/dev/$name $((sector + 1)) $tag $mark,via=bio" \\
            2>/tmp/bypass > {BYPASS_PARAMETER}
        bypass=$(dmesg | grep "guest-bypass tag=$tag " | tail -n 1)
        bypass=${{bypass##*result=}}
        if [ -z "$bypass" ]; then
            bypass=none
            echo "guest-bypass-missing tag=$tag" \\
                 "$(cat /tmp/insmod /tmp/bypass | head -c 160 | tr '\\n' ' ')"
        fi
        echo "guest-disk boot=$boot seq=$seq $name serial=${{serial:--}}" \\
             "ro=$ro sector=$sector bypass=$bypass write=$write"
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
  APPEND console=ttyS0 quiet loglevel=3 panic=5
"""


def guest_dir():
    return config.ROOT / '.work' / 'cloud' / 'guest'


def kernel():
    """(vmlinuz, modules directory /lib/modules/VERSION, version) of
    Debian's installed kernel.
    """
    kernels = sorted(Path('/boot').glob('vmlinuz-*'))
    for vmlinuz in reversed(kernels):
        version = vmlinuz.name.removeprefix('vmlinuz-')
        modules = Path('/lib/modules') / version
        if (modules / 'kernel/drivers/block/virtio_blk.ko').exists():
            return vmlinuz, modules, version
    raise config.SeriesError(
        'no Debian kernel with virtio_blk.ko under /boot and /lib/modules: '
        f'install {" ".join(PACKAGES)}')


def write_module(version, directory):
    """guest_write.ko built for the kernel `version` (from Debian's
    linux-headers-VERSION), its debug symbols stripped.
    """
    headers = Path('/usr/src') / f'linux-headers-{version}'
    if not (headers / 'Makefile').exists():
        raise config.SeriesError(f'{headers} is missing: install '
                                 f'linux-headers-{version}')
    build = Path(directory) / 'guest_write'
    build.mkdir()
    shutil.copy(WRITE_MODULE, build / WRITE_MODULE.name)
    (build / 'Makefile').write_text(f'obj-m := {WRITE_MODULE.stem}.o\n')
    process.run(['make', '-s', '-C', headers, f'M={build}', 'modules'])
    module = build / f'{WRITE_MODULE.stem}.ko'
    process.run(['strip', '--strip-debug', module])
    return module.read_bytes()


def load_order(modules_dep, names):
    """The paths (as modules.dep gives them) of the modules `names` and of
    every module they need, each after those it needs. modules.dep lists
    all that a module needs, the last first to load.
    """
    needs = {}
    for line in modules_dep.splitlines():
        module, _, needed = line.partition(':')
        needs[module] = needed.split()
    by_name = {Path(module).name.removesuffix('.ko'): module
               for module in needs}
    order = []
    for name in names:
        if name not in by_name:
            raise config.SeriesError(f'kernel module {name}.ko is not in '
                                     'modules.dep')
        for module in [*reversed(needs[by_name[name]]), by_name[name]]:
            if module not in order:
                order.append(module)
    return order


def shared_libraries(ldd_output):
    """The paths of the libraries (the loader included) in the output of
    ldd.
    """
    return [found.group(1) for found in re.finditer(
        r'^\s*(?:\S+ => )?(/\S+) \(0x', ldd_output, re.M)]


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


FILES = {'etc/passwd': 'root:*:0:0:root:/root:/bin/sh\n',
         'etc/group': 'root:x:0:\n',
         'etc/shells': '/bin/sh\n',
         # tempest runs its commands as `sudo ...`; the guest has only root.
         'bin/sudo': '#!/bin/sh\nexec "$@"\n'}


def initramfs(modules, write_ko):
    busybox = shutil.which('busybox') or '/bin/busybox'
    if not is_static(busybox):
        raise config.SeriesError(f'{busybox} is not statically linked: '
                                 'install busybox-static')
    directory, regular = stat.S_IFDIR | 0o755, stat.S_IFREG
    entries = [('dev', directory, b'', (0, 0)),
               # The kernel opens it for init's output before init runs.
               ('dev/console', stat.S_IFCHR | 0o600, b'', (5, 1)),
               ('root', stat.S_IFDIR | 0o700, b'', (0, 0)),
               ('root/.ssh', stat.S_IFDIR | 0o700, b'', (0, 0)),
               ('etc/dropbear', directory, b'', (0, 0)),
               ('bin/busybox', regular | 0o755, Path(busybox).read_bytes(),
                (0, 0)),
               ('init', regular | 0o755, INIT.encode(), (0, 0))]
    entries += [(path, regular | (0o755 if path.startswith('bin/') else 0o644),
                 text.encode(), (0, 0)) for path, text in FILES.items()]
    for path, program in PROGRAMS.items():
        if not Path(program).exists():
            raise config.SeriesError(f'{program} is missing: install '
                                     f'{" ".join(PACKAGES)}')
        entries.append((path, regular | 0o755, Path(program).read_bytes(),
                        (0, 0)))
        ldd = process.run(['ldd', program]).stdout
        for library in shared_libraries(ldd):
            entries.append((library.lstrip('/'), regular | 0o755,
                            Path(library).read_bytes(), (0, 0)))
    order = load_order((modules / 'modules.dep').read_text(), BOOT_MODULES)
    entries.append(('modules/order', regular | 0o644,
                    ''.join(f'{Path(module).name.removesuffix(".ko")}\n'
                            for module in order).encode(), (0, 0)))
    for module in order:
        entries.append((f'modules/{Path(module).name}', regular | 0o644,
                        (modules / module).read_bytes(), (0, 0)))
    entries.append(('modules/guest_write.ko', regular | 0o644, write_ko,
                    (0, 0)))
    return gzip.compress(cpio_newc(with_directories(entries)), mtime=0)


def with_directories(entries):
    """`entries` with an entry before them for each parent directory that
    has none, each path once (the first wins).
    """
    seen, result = set(), []
    for entry in entries:
        parts = Path(entry[0]).parts
        for depth in range(1, len(parts)):
            parent = '/'.join(parts[:depth])
            if parent not in seen:
                seen.add(parent)
                result.append((parent, stat.S_IFDIR | 0o755, b'', (0, 0)))
        if entry[0] not in seen:
            seen.add(entry[0])
            result.append(entry)
    return result


def version():
    """A digest of what the image is made of here (not of Debian's
    packages): a new one when the init, the files or the modules change.
    """
    return hashlib.sha256(repr((INIT, FILES, BOOT_MODULES, PROGRAMS)).encode()
                          + WRITE_MODULE.read_bytes()).hexdigest()[:16]


def build(path=None):
    """Build the guest image (raw) at `path`; return the path."""
    path = Path(path or guest_dir() / 'guest.img')
    for tool in ('syslinux', 'mcopy', 'mkfs.fat', 'busybox'):
        if not shutil.which(tool):
            raise config.SeriesError(f'{tool} is missing: install '
                                     f'{" ".join(PACKAGES)}')
    vmlinuz, modules, version = kernel()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        write_ko = write_module(version, tmp)
        image = Path(tmp) / 'guest.img'
        with open(image, 'wb') as f:
            f.truncate(IMAGE_MIB << 20)
        process.run(['mkfs.fat', '-n', 'GUEST', image])
        process.run(['syslinux', '--install', image])
        files = {'vmlinuz': vmlinuz.read_bytes(),
                 'initrd': initramfs(modules, write_ko),
                 'syslinux.cfg': SYSLINUX_CFG.encode()}
        for name, data in files.items():
            (Path(tmp) / name).write_bytes(data)
            process.run(['mcopy', '-i', image, Path(tmp) / name,
                         f'::{name}'], env={'MTOOLS_SKIP_CHECK': '1'})
        os.replace(image, path)
    return path


@dataclasses.dataclass(frozen=True)
class Report:
    """One line of the guest about one disk (see the module's
    docstring).
    """
    boot: str
    seq: int
    disk: str
    serial: str
    ro: bool
    sector: int
    # The errno, or None when the module logged no result.
    bypass: int | None
    write: str
    error: str

    @property
    def bypass_text(self):
        """'written', the errno's name (EIO), or 'missing'."""
        if self.bypass is None:
            return 'missing'
        if self.bypass == 0:
            return 'written'
        return errno.errorcode.get(-self.bypass, str(self.bypass))


def reports(console):
    """Every guest-disk line of the console, in order, as Reports."""
    return [Report(found['boot'], int(found['seq']), found['disk'],
                   found['serial'], found['ro'] == '1',
                   int(found['sector']),
                   None if found['bypass'] == 'none' else int(found['bypass']),
                   found['write'], found['error'] or '')
            for found in LINE.finditer(console)]


MISSING = re.compile(r'^guest-bypass-missing tag=(?P<tag>\S+) ?(?P<why>.*?)'
                     r'\s*$', re.M)


def missing(console):
    """{tag: insmod's and the request's errors} of the rounds whose
    bypass write logged no result (tag: boot-seq-disk).
    """
    return {found['tag']: found['why'] for found in MISSING.finditer(console)}


def latest(console, after=None):
    """{disk: Report}: the last complete line of each disk in the
    guest's latest boot (one whose bypass write logged its result),
    counting only rounds after `after` (a (boot, seq) pair; rounds of
    another boot all count).
    """
    lines = reports(console)
    if not lines:
        return {}
    boot = lines[-1].boot
    found = {}
    for line in lines:
        if line.boot != boot:
            continue
        if after and after[0] == boot and line.seq <= after[1]:
            continue
        if line.bypass is None:
            continue
        found[line.disk] = line
    return found


# The first lines of a guest kernel's oops, panic or BUG report.
KERNEL_FAULT = re.compile(
    r'^\[\s*\d+\.\d+\] ((?:general protection fault|BUG: |kernel BUG at |'
    r'Oops: |Kernel panic|RIP: 0010:)[^\r\n]*)', re.M)


def kernel_faults(console):
    """The guest kernel's lines that report a fault of its own (an oops,
    a panic, a BUG), each once, in order.
    """
    return list(dict.fromkeys(found.group(1).strip()
                              for found in KERNEL_FAULT.finditer(console)))


def silence(console):
    """Why a guest's console has no complete round to show: its last
    round, its rounds without a bypass result (with the last error) and
    the faults its kernel reported.
    """
    lines = reports(console)
    parts = [f'last round boot={lines[-1].boot} seq={lines[-1].seq}'
             if lines else 'no round printed']
    errors = missing(console)
    if errors:
        last = errors[list(errors)[-1]]
        parts.append(f'{len(errors)} bypass writes without a result '
                     f'(last: {last or "no error printed"})')
    faults = kernel_faults(console)
    if faults:
        parts.append(f'its kernel faulted: {"; ".join(faults[:3])}')
    return ', '.join(parts)


def uuid_slot(instance_uuid):
    """The slot of a guest whose config drive gives none."""
    return int(instance_uuid[:3], 16) % SLOTS


def slot_sector(slot, disk_bytes):
    """The first sector of `slot` on a disk of `disk_bytes` (the init
    script's arithmetic).
    """
    return disk_bytes // SECTOR - SLOT_REGION + 2 * slot


def marker(instance_uuid):
    """What every sector this guest writes starts with."""
    return f'mae-write,uuid={instance_uuid},'.encode()
