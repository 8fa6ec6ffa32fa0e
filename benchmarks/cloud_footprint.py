"""Start-up time and memory of the real cloud.

Times `tools/series cloud up` cold (no virtualenv, no guest image, no
cloud: what a fresh clone does after the Debian packages are in) and warm
(virtualenv and guest image kept, everything else made again after
`cloud down`), unless --memory-only; then prints the memory of the whole
cloud (the proportional set size, PSS, of every process it started:
OpenStack services with their uWSGI workers and privsep helpers, Ceph,
each compute host's libvirt, and the QEMU of each running guest; MariaDB
and RabbitMQ, which the machine shares, shown apart).

Run with: python3 benchmarks/cloud_footprint.py [--memory-only]
Without --memory-only it takes the cloud down twice: its servers are
lost.
"""

from pathlib import Path
import shutil
import subprocess
import sys
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from series.cloud import deploy  # noqa: E402
from series.cloud import guest  # noqa: E402
from series.cloud import hosts  # noqa: E402
from series.cloud import service_venv  # noqa: E402
from series.cloud import services  # noqa: E402


def timed_up():
    started = time.monotonic()
    subprocess.run([sys.executable, ROOT / 'tools' / 'series', 'cloud',
                    'up'], check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def down():
    subprocess.run([sys.executable, ROOT / 'tools' / 'series', 'cloud',
                    'down'], check=True, stdout=subprocess.DEVNULL)


def pss_kib(pid):
    try:
        for line in Path(f'/proc/{pid}/smaps_rollup').read_text().splitlines():
            if line.startswith('Pss:'):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children():
    """{pid: parent pid} of every process."""
    found = {}
    for entry in Path('/proc').iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / 'stat').read_text().rsplit(') ', 1)[1]
            except OSError:
                continue
            found[int(entry.name)] = int(stat.split()[1])
    return found


def tree(root, parents):
    pids, todo = {root}, [root]
    while todo:
        pid = todo.pop()
        for child, parent in parents.items():
            if parent == pid and child not in pids:
                pids.add(child)
                todo.append(child)
    return pids


def by_command(word):
    return {pid for pid in children()
            if word in Path(f'/proc/{pid}/cmdline').read_bytes().decode(
                errors='replace').split('\0')[0]}


def memory():
    parents = children()
    groups = {}
    for service in services.all_services():
        pid = service.pid()
        if pid:
            groups[service.name] = tree(pid, parents)
    for daemon, pid in deploy.cluster().status():
        if pid:
            groups[f'ceph {daemon}'] = {pid}
    groups['guests (QEMU)'] = set()
    for host in hosts.HOSTS:
        groups['guests (QEMU)'] |= set(hosts.qemu_pids(host).values())
    shared = {'MariaDB': by_command('mariadbd'),
              'RabbitMQ (beam)': by_command('beam.smp')}
    total = 0
    print('memory (PSS, MiB):')
    for name, pids in groups.items():
        mib = sum(pss_kib(pid) for pid in pids) / 1024
        total += mib
        print(f'  {name:22} {mib:8.1f}')
    print(f'  {"the cloud":22} {total:8.1f}  '
          f'({len(groups["guests (QEMU)"])} guests)')
    for name, pids in shared.items():
        print(f'  {name + " (shared)":22} '
              f'{sum(pss_kib(pid) for pid in pids) / 1024:8.1f}')


def main(memory_only):
    if not memory_only:
        down()
        shutil.rmtree(service_venv.path(), ignore_errors=True)
        shutil.rmtree(guest.guest_dir(), ignore_errors=True)
        cold = timed_up()
        down()
        warm = timed_up()
        print(f'cloud up, cold: {cold:6.0f} s (virtualenv and guest image '
              'built)')
        print(f'cloud up, warm: {warm:6.0f} s (virtualenv and guest image '
              'kept)')
    memory()


if __name__ == '__main__':
    main('--memory-only' in sys.argv[1:])
