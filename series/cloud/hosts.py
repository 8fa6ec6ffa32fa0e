"""The real cloud's two compute hosts on one machine.

Each host is a virtlogd, a libvirtd and a nova-compute of its own,
each started in a mount and UTS namespace of its own where the host's
directories are bind-mounted over /etc/libvirt, /run/libvirt,
/var/lib/libvirt, /var/log/libvirt, /var/cache/libvirt, /etc/hosts and
the compute state directory (COMPUTE_STATE, with the instances), and
the hostname is the host's name: what libvirt reports as the
hypervisor's hostname and nova-compute as its host. So the two hosts
share one Nova configuration, as real ones do (the same instances_path,
different directories behind it), and nova-compute talks to its libvirtd
over the local socket. Each libvirtd has its own host UUID and also
listens on TCP at the host's loopback address (127.0.0.2, 127.0.0.3),
where the other host's libvirtd (live migration, peer to peer) and
`virsh -c URI` on the machine reach it. The network namespace stays the
machine's: the control plane on 127.0.0.1, Ceph and RabbitMQ are reached
the same way from both hosts.
"""

import dataclasses
import os
from pathlib import Path
import shlex
import shutil
import signal
import subprocess
import uuid

from series.cloud import layout
from series import config

# (system path, directory under the host's own)
BIND_MOUNTS = (('/etc/libvirt', 'etc'), ('/run/libvirt', 'run'),
               ('/var/lib/libvirt', 'lib'), ('/var/log/libvirt', 'log'),
               ('/var/cache/libvirt', 'cache'),
               # A file: libvirt resolves its hostname (without a name
               # server here, each lookup would wait 5 s and fail).
               ('/etc/hosts', 'hosts'))


def compute_state():
    """nova-compute's state_path on every host: on the machine an empty
    directory, in a host's namespaces that host's own.
    """
    return layout.directory() / 'compute'


QEMU_USER = 'libvirt-qemu'
# libvirtd's TCP port (listen_tcp), on each host's address.
LIBVIRT_PORT = 16509


@dataclasses.dataclass(frozen=True)
class Host:
    name: str
    address: str
    # Suffix of the host's service names: libvirtd-a, nova-compute-a.
    key: str

    @property
    def directory(self):
        return layout.directory() / 'hosts' / self.name

    @property
    def uri(self):
        """How nova-compute, the other host and virsh reach its libvirtd."""
        return f'qemu+tcp://{self.address}/system'

    def bind_mounts(self):
        """[(path in the host's namespaces, directory on the machine)]."""
        return [(system, self.directory / own)
                for system, own in BIND_MOUNTS] + [
                    (str(compute_state()), self.directory / 'compute')]

    def path(self, inside):
        """Where the path `inside` the host's namespaces is on the
        machine.
        """
        inside = str(inside)
        for system, own in self.bind_mounts():
            if inside == system or inside.startswith(system + '/'):
                return own / os.path.relpath(inside, system)
        return Path(inside)

    def uuid(self):
        """The libvirt host UUID, made once per cloud: live migration
        refuses a destination with the source's UUID.
        """
        path = self.directory / 'host-uuid'
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'{uuid.uuid4()}\n')
        return path.read_text().strip()

    def namespaced(self, *command):
        """`command` in new mount and UTS namespaces: the host's
        directories bind-mounted, the host's name. The command keeps the
        PID it is started with (unshare and sh exec it).
        """
        steps = [f'mount --bind {shlex.quote(str(own))} '
                 f'{shlex.quote(system)}'
                 for system, own in self.bind_mounts()]
        steps.append(f'hostname {self.name}')
        unshare = ['unshare', '--mount', '--uts', '--propagation', 'private']
        return (*unshare, '--', 'sh', '-ec',
                '; '.join([*steps, 'exec "$@"']), 'sh',
                *[str(part) for part in command])

    def pid_file(self, daemon):
        return self.directory / 'run' / f'{daemon}.daemon.pid'


HOSTS = (Host('mae-compute-a', '127.0.0.2', 'a'),
         Host('mae-compute-b', '127.0.0.3', 'b'))


def by_name(name):
    return {host.name: host for host in HOSTS}[name]


LIBVIRTD_CONF = """\
# Written by `tools/series cloud up` for {name}.
listen_tls = 0
listen_tcp = 1
listen_addr = "{address}"
auth_tcp = "none"
host_uuid = "{uuid}"
"""

QEMU_CONF = """\
# Written by `tools/series cloud up` for {name}.
# The destination QEMU of a live migration listens here, so that the two
# hosts' port allocators never collide.
migration_address = "{address}"
migration_host = "{address}"
"""


def make_mount_points():
    """libvirt's directories on the machine, which each host's own are
    mounted over. Without systemd nothing makes /run/libvirt (a tmpfs
    directory) at boot.
    """
    for system, _ in BIND_MOUNTS:
        if system != '/etc/hosts':
            Path(system).mkdir(parents=True, exist_ok=True)


def prepare(host):
    """The host's directories and libvirt configuration."""
    compute_state().mkdir(parents=True, exist_ok=True)
    for system, own in host.bind_mounts():
        if system != '/etc/hosts':
            own.mkdir(parents=True, exist_ok=True)
    # Made by the packages on a real compute host.
    (host.directory / 'compute' / 'instances').mkdir(exist_ok=True)
    (host.directory / 'hosts').write_text(
        f'127.0.0.1 localhost\n{host.address} {host.name}\n')
    etc = host.directory / 'etc'
    values = {'name': host.name, 'address': host.address,
              'uuid': host.uuid()}
    (etc / 'libvirtd.conf').write_text(LIBVIRTD_CONF.format(**values))
    (etc / 'qemu.conf').write_text(QEMU_CONF.format(**values))
    (etc / 'virtlogd.conf').write_text('')
    # libvirtd makes the rest of its state directory; this one it
    # expects from the package, owned by the user QEMU runs as.
    qemu = host.directory / 'lib' / 'qemu'
    qemu.mkdir(exist_ok=True)
    subprocess.run(['chown', f'{QEMU_USER}:{QEMU_USER}', qemu],
                   check=False)


def virsh(host, *args, check=True):
    return subprocess.run(['virsh', '-c', host.uri, *args], check=check,
                          text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)


def domains(host, check=False):
    """The names of every domain the host's libvirtd knows (none where
    libvirt is not installed yet, as on a new machine). With `check`, a
    libvirtd that does not answer, or no virsh to ask it with, is an
    error, not a host without domains.
    """
    if not shutil.which('virsh'):
        if check:
            raise config.SeriesError(f'{host.name}: no virsh to list its '
                                     'domains with')
        return []
    listed = virsh(host, 'list', '--all', '--name', check=False)
    if listed.returncode != 0:
        if check:
            raise config.SeriesError(
                f'{host.name}: virsh list failed (exit '
                f'{listed.returncode}): {listed.stderr.strip()}')
        return []
    return [name for name in listed.stdout.split() if name]


def qemu_pids(host):
    """{domain: PID} of the QEMU processes libvirt started on the host
    (from its PID files), each confirmed in /proc to be that domain's
    QEMU.
    """
    found = {}
    for pid_file in (host.directory / 'run' / 'qemu').glob('*.pid'):
        domain = pid_file.stem
        try:
            pid = int(pid_file.read_text())
            command = Path(f'/proc/{pid}/cmdline').read_bytes()
        except (OSError, ValueError):
            continue
        if b'qemu-system' in command and (
                f'guest={domain},'.encode() in command):
            found[domain] = pid
    return found


def remove_domains(host):
    """Destroy and undefine every domain of the host through its
    libvirtd; the names of the domains.
    """
    names = domains(host)
    for name in names:
        virsh(host, 'destroy', name, check=False)
        virsh(host, 'undefine', name, check=False)
    return names


def kill_qemus(host):
    """Kill by PID every QEMU of the host still running (its libvirtd
    gone); the names of their domains.
    """
    found = qemu_pids(host)
    for pid in found.values():
        os.kill(pid, signal.SIGKILL)
    return sorted(found)
