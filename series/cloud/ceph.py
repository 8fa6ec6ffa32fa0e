"""Ceph for the real cloud, in user space: one monitor, one manager and one
OSD (BlueStore on a sparse file), bound to 127.0.0.1, with authentication
off and pools of size 1. Cinder's RBD driver and QEMU (through librbd)
use it; it needs no kernel module, unlike LVM, iSCSI or NFS.

Every daemon writes its PID file under <directory>/run; they are stopped
by those PIDs, never by name.
"""

import os
from pathlib import Path
import shutil
import signal
import subprocess
import time
import uuid

from series import config
from series import process

PACKAGES = ('ceph-mon', 'ceph-osd', 'ceph-mgr', 'python3-rbd',
            'python3-rados')
DAEMONS = ('mon.a', 'mgr.x', 'osd.0')
OSD_BYTES = 10 << 30
START_SECONDS = 90
STOP_SECONDS = 30

CONF = """\
[global]
fsid = {fsid}
mon_host = v1:127.0.0.1:{port}
public_addr = 127.0.0.1
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
osd_crush_chooseleaf_type = 0
run_dir = {directory}/run
pid_file = {directory}/run/$name.pid
admin_socket = {directory}/run/$name.asok
log_file = {directory}/log/$name.log

[mon.a]
mon_data = {directory}/mon/a

[mgr.x]
mgr_data = {directory}/mgr/x

[osd.0]
osd_data = {directory}/osd/0
osd_objectstore = bluestore
# Outside osd_data: BlueStore links osd_data/block to it.
bluestore_block_path = {directory}/osd-0.block
bluestore_block_size = {osd_bytes}
bluestore_block_create = true
osd_memory_target = 536870912
# On its first start, before it has the monitor map, the OSD would send
# these updates with a null fsid, which the monitor refuses ("wrong
# fsid"): the OSD is put in the CRUSH map once it is up instead.
osd_class_update_on_start = false
osd_crush_update_on_start = false
"""


# The `ceph` command the cloud's services find first on their PATH.
# Ceph 16.2's command line now and then asks the monitor for its command
# descriptions before it has the monitor map; the request carries a null
# fsid and the monitor refuses it (about 1 call in 100 here, more under
# load). Nova runs `ceph df` at every resource update of an RBD images
# backend and Cinder `ceph mon dump` at every attachment update; one such
# refusal fails the operation (an evacuation, an attach). Asked again,
# the command works: this asks again, as Cluster.ceph does, for that
# refusal only.
CLI_WRAPPER = """\
#!/bin/bash
# Written by tools/series (series/cloud/ceph.py): {real}, asked again
# when the monitor refused its first request (a Ceph 16.2 client race).
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
for attempt in 1 2 3 4 5; do
    {real} "$@" >"$out" 2>"$err"
    status=$?
    grep -q 'problem getting command descriptions' "$err" || break
    sleep 0.2
done
cat "$out"
cat "$err" >&2
exit $status
"""


def write_cli_wrapper(directory, real='/usr/bin/ceph'):
    """CLI_WRAPPER of the command `real` as `ceph` in `directory`; the
    directory.
    """
    path = Path(directory) / 'ceph'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CLI_WRAPPER.format(real=real))
    path.chmod(0o755)
    return path.parent


class Cluster:

    def __init__(self, directory, port=6789):
        self.directory = Path(directory)
        self.port = port
        self.conf = self.directory / 'ceph.conf'

    def ceph(self, *args, tool='ceph', timeout=60):
        """Run the ceph (or rbd) command line on this cluster."""
        for attempt in range(20):
            proc = subprocess.run(
                [tool, '-c', str(self.conf), *args], text=True,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                timeout=timeout)
            # A client that asks before it has the monitor map sends a
            # null fsid, and the monitor refuses it: ask again.
            if 'problem getting command descriptions' not in proc.stdout:
                break
            time.sleep(0.5)
        if proc.returncode != 0:
            raise config.SeriesError(f'{tool} {" ".join(args)} failed '
                                     f'(exit {proc.returncode}): '
                                     f'{proc.stdout.strip()}')
        return proc.stdout

    def pid(self, daemon):
        """The PID of a running daemon of this cluster, or None."""
        path = self.directory / 'run' / f'{daemon}.pid'
        try:
            pid = int(path.read_text())
        except (OSError, ValueError):
            return None
        return pid if self.runs(pid) else None

    def runs(self, pid):
        """Whether `pid` is a daemon of this cluster (a stale PID file may
        name another process by now).
        """
        try:
            command = Path(f'/proc/{pid}/cmdline').read_bytes().split(b'\0')
        except OSError:
            return False
        return str(self.conf).encode() in command

    def status(self):
        """[(daemon, PID or None)]."""
        return [(daemon, self.pid(daemon)) for daemon in DAEMONS]

    def up(self):
        """Create the cluster if needed and start what is not running."""
        missing = [tool for tool in ('ceph-mon', 'ceph-mgr', 'ceph-osd',
                                     'monmaptool', 'ceph-authtool', 'rbd')
                   if not shutil.which(tool)]
        if missing:
            raise config.SeriesError(f'missing {", ".join(missing)}: '
                                     f'install {" ".join(PACKAGES)}')
        if not self.conf.exists():
            self.create()
        started = time.monotonic()
        if not self.pid('mon.a'):
            process.run(['ceph-mon', '-c', self.conf, '-i', 'a'])
        if not self.pid('mgr.x'):
            process.run(['ceph-mgr', '-c', self.conf, '-i', 'x'])
        if not (self.directory / 'osd' / '0' / 'ready').exists():
            self.create_osd()
        if not self.pid('osd.0'):
            process.run(['ceph-osd', '-c', self.conf, '-i', '0'])
        while '1 up' not in self.ceph('osd', 'stat'):
            if time.monotonic() - started > START_SECONDS:
                raise config.SeriesError(
                    f'the Ceph OSD is not up after {START_SECONDS}s; see '
                    f'{self.directory / "log" / "osd.0.log"}')
            time.sleep(0.5)
        self.ceph('osd', 'crush', 'add', 'osd.0', '1.0', 'root=default',
                  'host=localhost')

    def create(self):
        for sub in ('run', 'log', 'mon/a', 'mgr/x', 'osd/0'):
            (self.directory / sub).mkdir(parents=True, exist_ok=True)
        fsid = str(uuid.uuid4())
        conf = CONF.format(fsid=fsid, port=self.port,
                           directory=self.directory, osd_bytes=OSD_BYTES)
        monmap = self.directory / 'monmap'
        keyring = self.directory / 'mon.keyring'
        process.run(['monmaptool', '--create', '--add', 'a',
                     f'v1:127.0.0.1:{self.port}', '--fsid', fsid, monmap])
        process.run(['ceph-authtool', '--create-keyring', keyring,
                     '--gen-key', '-n', 'mon.', '--cap', 'mon', 'allow *'])
        # Written last: a cluster whose conf exists was created.
        tmp = self.conf.with_suffix('.tmp')
        tmp.write_text(conf)
        process.run(['ceph-mon', '-c', tmp, '--mkfs', '-i', 'a', '--monmap',
                     monmap, '--keyring', keyring])
        tmp.rename(self.conf)

    def create_osd(self):
        osd_uuid = str(uuid.uuid4())
        self.ceph('osd', 'new', osd_uuid, '0')
        process.run(['ceph-osd', '-c', self.conf, '-i', '0', '--mkfs',
                     '--osd-uuid', osd_uuid])

    def create_pool(self, name, pgs=8):
        """A pool for RBD images (idempotent)."""
        if name not in self.ceph('osd', 'pool', 'ls').split():
            self.ceph('osd', 'pool', 'create', name, str(pgs))
            self.ceph('pool', 'init', name, tool='rbd')

    def down(self, remove=True):
        """Stop the daemons by their PIDs; remove the cluster's data."""
        running = {daemon: pid for daemon, pid in self.status() if pid}
        for pid in running.values():
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        # A daemon removes its PID file as it begins to stop: wait for
        # the process itself.
        while running and time.monotonic() < deadline:
            time.sleep(0.5)
            running = {d: p for d, p in running.items() if self.runs(p)}
        for pid in running.values():
            os.kill(pid, signal.SIGKILL)
        if remove:
            shutil.rmtree(self.directory, ignore_errors=True)
        return sorted(running)
