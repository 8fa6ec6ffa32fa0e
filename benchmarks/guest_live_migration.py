"""The real cloud's guest through live migrations at a given speed, in
plain QEMU under TCG as the cloud runs it: does its kernel survive?

Builds the guest image (series.cloud.guest), boots it in QEMU with a
read-only and a writable disk, waits for its first complete round, then
live-migrates it N times between two QEMU processes on this machine
(`-incoming`, the migration's max-bandwidth set to the speed asked for)
and after each migration reads the guest's console on the destination:
its last round and any fault its kernel reported. Stops at the first
fault. Prints one line per migration and a summary line.

No Nova, libvirt or Ceph: a fault here is the guest's memory as QEMU
migrated it. The scenario's rabbitmq-restarted fault holds its migration
at series.cloud.faults.HELD_MIB_PER_SECOND; the other moves run at full
speed.

Run with: python3 benchmarks/guest_live_migration.py [MIGRATIONS]
          [MIB_PER_SECOND] [--image PATH]
"""

import argparse
import json
from pathlib import Path
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from series.cloud import guest  # noqa: E402

UUID = '0a1b2c3d-4e5f-4061-8273-948596a7b8c9'
DISK_BYTES = 8 << 20
FIRST_PORT = 45000


class Qemu:
    """One QEMU process of the guest, with its QMP socket and console."""

    def __init__(self, work, index, image, incoming=None):
        self.socket_path = work / f'qmp{index}.sock'
        self.console = work / f'console{index}.log'
        command = [
            'qemu-system-x86_64', '-machine', 'pc,accel=tcg', '-m', '128',
            '-uuid', UUID, '-nographic', '-no-reboot', '-monitor', 'none',
            '-serial', f'file:{self.console}',
            '-qmp', f'unix:{self.socket_path},server=on,wait=off',
            '-drive', f'file={image},format=raw,if=none,id=boot',
            '-device', 'virtio-blk-pci,drive=boot,bootindex=0',
            '-drive', f'file={work / "ro.img"},format=raw,if=none,id=ro,'
            'readonly=on',
            '-device', 'virtio-blk-pci,drive=ro,serial=read-only-disk',
            '-drive', f'file={work / "rw.img"},format=raw,if=none,id=rw',
            '-device', 'virtio-blk-pci,drive=rw,serial=writable']
        if incoming:
            command += ['-incoming', incoming]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not self.socket_path.exists():
            if time.monotonic() > deadline:
                raise SystemExit('QEMU made no QMP socket in 30 s')
            time.sleep(0.1)
        connection = socket.socket(socket.AF_UNIX)
        connection.connect(str(self.socket_path))
        self.qmp = connection.makefile('rw')
        self.qmp.readline()
        self.call('qmp_capabilities')

    def call(self, name, **arguments):
        self.qmp.write(json.dumps({'execute': name,
                                   'arguments': arguments}) + '\n')
        self.qmp.flush()
        while True:
            line = self.qmp.readline()
            if not line:
                raise EOFError(f'QEMU (PID {self.process.pid}) exited')
            reply = json.loads(line)
            if 'return' in reply or 'error' in reply:
                return reply

    def text(self):
        return self.console.read_text(errors='replace')

    def stop(self):
        self.process.kill()
        self.process.wait()


def migrate(source, work, index, image, mib_per_second):
    port = FIRST_PORT + index
    destination = Qemu(work, index, image, f'tcp:127.0.0.1:{port}')
    source.call('migrate-set-parameters',
                **{'max-bandwidth': mib_per_second << 20})
    started = time.monotonic()
    source.call('migrate', uri=f'tcp:127.0.0.1:{port}')
    while True:
        status = source.call('query-migrate')['return'].get('status')
        if status in ('completed', 'failed', 'cancelled'):
            break
        time.sleep(0.2)
    source.stop()
    return destination, status, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('migrations', nargs='?', type=int, default=10)
    parser.add_argument('mib_per_second', nargs='?', type=int, default=4)
    parser.add_argument('--image', type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        image = args.image or guest.build(work / 'guest.img')
        for name in ('ro', 'rw'):
            (work / f'{name}.img').write_bytes(b'\x5a' * DISK_BYTES)
        qemu = Qemu(work, 0, image)
        deadline = time.monotonic() + 120
        while len(guest.latest(qemu.text())) < 3:
            if time.monotonic() > deadline:
                raise SystemExit('the guest printed no complete round')
            time.sleep(1)
        faulted = None
        try:
            for number in range(1, args.migrations + 1):
                qemu, status, seconds = migrate(qemu, work, number, image,
                                                args.mib_per_second)
                time.sleep(2 * guest.REPORT_SECONDS)
                text = qemu.text()
                rounds = guest.reports(text)
                faults = guest.kernel_faults(text)
                print(f'migration {number}: {status} in {seconds:.1f}s; '
                      f'last round {rounds[-1].seq if rounds else "-"}; '
                      f'kernel faults: {"; ".join(faults[:2]) or "none"}',
                      flush=True)
                if faults or status != 'completed':
                    faulted = number
                    break
        except EOFError:
            faulted = number
            print(f'migration {number}: QEMU exited (the guest rebooted '
                  'after a panic, -no-reboot)', flush=True)
        finally:
            qemu.stop()
    done = faulted - 1 if faulted else args.migrations
    print(f'{args.migrations} migrations asked at {args.mib_per_second} '
          f'MiB/s: {done} completed with the guest kernel intact'
          + (f'; it faulted at migration {faulted}' if faulted else ''))
    return 1 if faulted else 0


if __name__ == '__main__':
    sys.exit(main())
