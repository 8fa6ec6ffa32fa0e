"""cinder-csi's node service (cloud-provider-openstack with its series)
on block devices of this machine. Each volume is a loop device over an
image file: read-only (`losetup --read-only`), as a disk that the compute
API attached read-only is in its guest, or writable. The Go program
cinder-csi-stage/ stages and publishes it as the kubelet asks the node
service to and reports what the kernel then holds: the mounts' options,
a write's outcome. The image's digest before and after says whether
anything reached the volume's data.

What this shows is the node service on a real kernel and block device.
It does not show a guest of the real cloud: no Kubernetes node runs there.
"""

import dataclasses
import hashlib
import json
import os
from pathlib import Path
import shutil
import tempfile
import time

from series import config
from series import go_module
from series import go_tests
from series import process
from series import queue
from series import suites

PROGRAM = Path(__file__).parent / 'cinder-csi-stage'
PROJECT = 'cloud-provider-openstack'
IMAGE_MIB = 64
READER = 'MULTI_NODE_READER_ONLY'
WRITER = 'SINGLE_NODE_WRITER'


@dataclasses.dataclass
class Case:
    name: str
    formatted: bool
    read_only_device: bool
    access_mode: str
    # What NodeStageVolume must answer; OK means staged and published.
    stage: str
    # Whether the image may change: a write landed, or mkfs ran.
    changes: bool
    # Whether the controller published it read-only (a PersistentVolume
    # with spec.csi.readOnly): its publish context says so.
    published_read_only: bool = False

    @property
    def mode(self):
        """The mounts' mode the case needs."""
        return ('ro' if self.access_mode == READER or
                self.published_read_only else 'rw')


CASES = (
    Case('reader-only volume on a read-only disk', True, True, READER,
         'OK', False),
    Case('writer volume on a writable disk (the control)', True, False,
         WRITER, 'OK', True),
    Case('writer volume published read-only on a read-only disk', True,
         True, WRITER, 'OK', False, published_read_only=True),
    Case('reader-only volume without a filesystem on a read-only disk',
         False, True, READER, 'FailedPrecondition', False),
    Case('reader-only volume without a filesystem on a writable disk',
         False, False, READER, 'FailedPrecondition', False),
    Case('writer volume published read-only without a filesystem on a '
         'read-only disk', False, True, WRITER, 'FailedPrecondition', False,
         published_read_only=True),
    Case('writer volume without a filesystem on a writable disk (the '
         'control: mkfs runs)', False, False, WRITER, 'OK', True),
)


def workspace_file():
    """The Go workspace the program builds in: it, cloud-provider-openstack's
    work tree and that tree's own workspace's (gophercloud's).
    """
    project = config.get_project(PROJECT)
    tree = go_tests.workspace(project, queue.ensure_tree(project))
    used = [PROGRAM, tree] + [
        config.get_project(name).tree
        for name in project.series_requirements]
    path = go_module.cache_directory() / 'work' / 'cinder-csi-stage.go.work'
    go_tests.write_workspace(path, tree, used)
    return path


def build():
    """go vet and go build of the program in its workspace; the binary."""
    env = dict(go_module.environment(), GOWORK=str(workspace_file()))
    binary = go_module.cache_directory() / 'bin' / 'cinder-csi-stage'
    for command in (['go', 'vet', '.'], ['go', 'build', '-o', binary, '.']):
        process.run(command, cwd=PROGRAM, env=env)
    return binary


def digest(path):
    with open(path, 'rb') as image:
        return hashlib.file_digest(image, 'sha256').hexdigest()


def image(directory, case):
    """The case's volume: an image file, formatted ext4 if the case says."""
    path = Path(directory) / 'volume.img'
    with open(path, 'wb') as out:
        out.truncate(IMAGE_MIB * 1024 * 1024)
    if case.formatted:
        process.run(['mkfs.ext4', '-q', '-F', path])
    return path


def stage(binary, case, directory):
    """Stage and publish the case's volume on a loop device; (what the
    program printed, or {} if nothing, its error output, whether the
    image changed).
    """
    path = image(directory, case)
    before = digest(path)
    read_only = ['--read-only'] if case.read_only_device else []
    device = process.run(['losetup', '--find', '--show', *read_only,
                          path]).stdout.strip()
    try:
        proc = process.run(
            [binary, '-device', device, '-access-mode', case.access_mode,
             *(['-published-read-only'] if case.published_read_only else
               []), '-directory', Path(directory) / 'mounts'], check=False)
    finally:
        # What the program left mounted (it unstages before it exits).
        for mount in reversed(mounts_under(directory)):
            process.run(['umount', mount], check=False)
        process.run(['losetup', '--detach', device], check=False)
    # Its output is the node service's log, then one line of JSON.
    lines = [line for line in proc.stdout.splitlines()
             if line.startswith('{')]
    outcome = json.loads(lines[-1]) if lines else {}
    errors = '' if proc.returncode == 0 else (
        f'exit {proc.returncode}: {proc.stdout.strip()[-300:]}')
    return outcome, errors, digest(path) != before


def mounts_under(directory):
    """The mount points under `directory`, in the order they were made."""
    prefix = str(Path(directory).resolve()) + os.sep
    return [fields[1] for fields in
            (line.split() for line in
             Path('/proc/self/mounts').read_text().splitlines())
            if len(fields) > 1 and fields[1].startswith(prefix)]


def case_problems(case, outcome, errors, changed):
    """What the program's outcome says against the case."""
    problems = [errors] if errors else []
    if outcome.get('stage') != case.stage:
        problems.append(f'staged {outcome.get("stage")} '
                        f'({outcome.get("stage_message", "")}), not '
                        f'{case.stage}')
    if changed != case.changes:
        problems.append('the image changed' if changed
                        else 'the image did not change')
    if case.stage != 'OK':
        if outcome.get('staging_options') or outcome.get('target_options'):
            problems.append('mounted though refused')
        return problems
    mode = case.mode
    for mount in ('staging', 'target'):
        options = outcome.get(f'{mount}_options', '').split(',')
        if options[0] != mode:
            problems.append(f'{mount} mount {",".join(options)}, not '
                            f'{mode}')
    write = outcome.get('write', '')
    if (write == 'ok') != (mode == 'rw'):
        problems.append(f'the write to the published path: {write}')
    if 'OK' != outcome.get('unpublish') or 'OK' != outcome.get('unstage'):
        problems.append(f'unpublish {outcome.get("unpublish")}, unstage '
                        f'{outcome.get("unstage")}')
    return problems


def missing_tools():
    """What this machine lacks to run the cases, '' if nothing."""
    if os.geteuid() != 0:
        return 'loop devices and mounts need root'
    missing = [tool for tool in ('losetup', 'mkfs.ext4')
               if not shutil.which(tool)]
    return f'{", ".join(missing)} not found' if missing else ''


def suite():
    """Every case, as a SuiteResult: one result per case."""
    result = suites.SuiteResult(name='cinder-csi node service on loop '
                                'devices')
    started = time.monotonic()
    lacking = missing_tools()
    if lacking:
        result.fail(f'cannot run here: {lacking}')
        return result
    binary = build()
    problems = []
    for case in CASES:
        with tempfile.TemporaryDirectory() as directory:
            outcome, errors, changed = stage(binary, case, directory)
        found = case_problems(case, outcome, errors, changed)
        result.results[case.name] = 'fail' if found else 'success'
        problems += [f'{case.name}: {problem}' for problem in found]
        process.say(f'cinder-csi node: {case.name}: '
                    f'{"; ".join(found) or "as expected"} ({outcome})')
    result.count()
    result.error = '; '.join(problems)
    result.seconds = round(time.monotonic() - started, 1)
    return result
