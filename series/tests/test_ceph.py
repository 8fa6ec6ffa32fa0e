"""Tests of series.cloud.ceph: a real one-OSD cluster, up and down.

It needs Debian's ceph-mon, ceph-mgr and ceph-osd (tools/setup-test-host
installs them for CI).
"""

import os
import shutil
import subprocess
import tempfile
import unittest

from series.cloud import ceph
from series.tests import base

MISSING = [tool for tool in ('ceph-mon', 'ceph-mgr', 'ceph-osd', 'rbd')
           if not shutil.which(tool)]


@unittest.skipIf(MISSING, f'missing {", ".join(MISSING)} (tools/'
                 'setup-test-host installs them)')
class ClusterTest(unittest.TestCase):

    def test_up_pool_image_down(self):
        directory = tempfile.mkdtemp(prefix='series-ceph-')
        self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        cluster = ceph.Cluster(directory, port=base.free_port())
        self.addCleanup(cluster.down)
        cluster.up()
        pids = dict(cluster.status())
        self.assertTrue(all(pids.values()), pids)
        cluster.up()  # idempotent: nothing restarted
        self.assertEqual(pids, dict(cluster.status()))
        cluster.create_pool('volumes')
        cluster.create_pool('volumes')
        cluster.ceph('create', '--size', '16', 'volumes/disk', tool='rbd')
        self.assertEqual(['disk'], cluster.ceph(
            'ls', 'volumes', tool='rbd').split())
        self.assertEqual([], cluster.down())  # none needed SIGKILL
        self.assertEqual([], [pid for pid in pids.values()
                              if cluster.runs(pid)])


class CliWrapperTest(unittest.TestCase):
    """The `ceph` the cloud's services run: the real command asked again
    when the monitor refused its first request, and only then.
    """

    def run_wrapper(self, failures, message):
        directory = tempfile.mkdtemp(prefix='series-ceph-cli-')
        self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        fake = f'{directory}/real-ceph'
        with open(fake, 'w') as script:
            script.write(f"""#!/bin/sh
calls=$(cat {directory}/calls 2>/dev/null || echo 0)
echo $((calls + 1)) > {directory}/calls
if [ "$calls" -lt {failures} ]; then
    echo 'Error EPERM: {message}' >&2
    exit 1
fi
echo "output of $*"
""")
        os.chmod(fake, 0o755)
        wrapper = ceph.write_cli_wrapper(f'{directory}/bin', real=fake)
        proc = subprocess.run([f'{wrapper}/ceph', 'df', '--format=json'],
                              text=True, capture_output=True)
        with open(f'{directory}/calls') as calls:
            return proc, int(calls.read())

    def test_asked_again_after_the_refusal(self):
        proc, calls = self.run_wrapper(
            2, 'problem getting command descriptions from mon.')
        self.assertEqual((0, 'output of df --format=json\n', '', 3),
                         (proc.returncode, proc.stdout, proc.stderr, calls))

    def test_other_errors_are_not_asked_again(self):
        proc, calls = self.run_wrapper(2, 'pool does not exist')
        self.assertEqual((1, '', 'Error EPERM: pool does not exist\n', 1),
                         (proc.returncode, proc.stdout, proc.stderr, calls))
