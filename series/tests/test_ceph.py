"""Tests of series.ceph: a real one-OSD cluster, up and down.

It needs Debian's ceph-mon, ceph-mgr and ceph-osd (tools/setup-test-host
installs them for CI).
"""

import shutil
import socket
import tempfile
import unittest

from series import ceph

MISSING = [tool for tool in ('ceph-mon', 'ceph-mgr', 'ceph-osd', 'rbd')
           if not shutil.which(tool)]


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@unittest.skipIf(MISSING, f'missing {", ".join(MISSING)} (tools/'
                 'setup-test-host installs them)')
class ClusterTest(unittest.TestCase):

    def test_up_pool_image_down(self):
        directory = tempfile.mkdtemp(prefix='series-ceph-')
        self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        cluster = ceph.Cluster(directory, port=free_port())
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
