"""Tests of series.cinder_csi_node: each case's outcome judged (the codes,
the mounts' options, the write, the image's data), and what the machine
needs. The real run, on loop devices, is CI's part of that name.
"""

import os
import unittest
from unittest import mock

from series import cinder_csi_node
from series.cinder_csi_node import CASES

(READER_RO, WRITER_RW, PV_RO, UNFORMATTED_RO, UNFORMATTED_RW,
 UNFORMATTED_PV_RO, MKFS) = CASES
STAGED = {'stage': 'OK', 'publish': 'OK', 'unpublish': 'OK',
          'unstage': 'OK'}
READ_ONLY = dict(STAGED, staging_options='ro,relatime',
                 target_options='ro,relatime',
                 write='open x: read-only file system')
WRITABLE = dict(STAGED, staging_options='rw,relatime',
                target_options='rw,relatime', write='ok')
REFUSED = {'stage': 'FailedPrecondition', 'stage_message': 'no filesystem'}


class CaseProblemsTest(unittest.TestCase):

    def problems(self, case, outcome, changed, errors=''):
        return cinder_csi_node.case_problems(case, outcome, errors, changed)

    def test_each_case_as_expected(self):
        for case, outcome, changed in ((READER_RO, READ_ONLY, False),
                                       (WRITER_RW, WRITABLE, True),
                                       (PV_RO, READ_ONLY, False),
                                       (UNFORMATTED_RO, REFUSED, False),
                                       (UNFORMATTED_RW, REFUSED, False),
                                       (UNFORMATTED_PV_RO, REFUSED, False),
                                       (MKFS, WRITABLE, True)):
            self.assertEqual([], self.problems(case, outcome, changed),
                             case.name)

    def test_a_reader_only_volume_mounted_writable(self):
        self.assertEqual(
            ['the image changed', 'staging mount rw,relatime, not ro',
             'target mount rw,relatime, not ro',
             'the write to the published path: ok'],
            self.problems(READER_RO, WRITABLE, True))

    def test_a_shared_volume_formatted(self):
        # Released cinder-csi: mkfs on a writable disk, then mounted.
        self.assertEqual(
            ['staged OK (), not FailedPrecondition', 'the image changed',
             'mounted though refused'],
            self.problems(UNFORMATTED_RW, WRITABLE, True))

    def test_a_control_whose_write_did_not_land(self):
        self.assertEqual(
            ['the image did not change',
             'the write to the published path: read-only file system'],
            self.problems(WRITER_RW, dict(WRITABLE,
                                          write='read-only file system'),
                          False))

    def test_a_volume_published_read_only_staged_writable(self):
        # Without its publish context read, as the node did before.
        self.assertEqual(
            ['staging mount rw,relatime, not ro',
             'target mount rw,relatime, not ro',
             'the write to the published path: ok'],
            self.problems(PV_RO, WRITABLE, False))

    def test_a_mount_left_behind(self):
        self.assertEqual(['unpublish OK, unstage Internal'],
                         self.problems(READER_RO, dict(READ_ONLY,
                                                       unstage='Internal'),
                                       False))

    def test_a_program_that_failed(self):
        self.assertEqual(['exit 1: boom'],
                         self.problems(READER_RO, READ_ONLY, False,
                                       'exit 1: boom'))


class MachineTest(unittest.TestCase):

    def test_root_is_needed(self):
        with mock.patch.object(os, 'geteuid', return_value=1000):
            self.assertEqual('loop devices and mounts need root',
                             cinder_csi_node.missing_tools())

    def test_a_machine_that_cannot_fails_rather_than_skips(self):
        with mock.patch.object(cinder_csi_node, 'missing_tools',
                               return_value='losetup not found'), \
                mock.patch.object(cinder_csi_node, 'build') as build:
            result = cinder_csi_node.suite()
        self.assertTrue(result.failed)
        self.assertEqual('cannot run here: losetup not found', result.error)
        build.assert_not_called()


class SuiteTest(unittest.TestCase):

    def test_one_result_per_case_with_its_problems(self):
        outcomes = {READER_RO.name: (READ_ONLY, '', False),
                    WRITER_RW.name: (WRITABLE, '', True),
                    PV_RO.name: (READ_ONLY, '', False),
                    UNFORMATTED_RO.name: (REFUSED, '', False),
                    UNFORMATTED_RW.name: (WRITABLE, '', True),
                    UNFORMATTED_PV_RO.name: (REFUSED, '', False),
                    MKFS.name: (WRITABLE, '', True)}
        with mock.patch.object(cinder_csi_node, 'missing_tools',
                               return_value=''), \
                mock.patch.object(cinder_csi_node, 'build',
                                  return_value='binary'), \
                mock.patch.object(cinder_csi_node, 'stage', side_effect=(
                    lambda binary, case, directory: outcomes[case.name])), \
                mock.patch.object(cinder_csi_node.process, 'say'):
            result = cinder_csi_node.suite()
        self.assertEqual((6, 1), (result.passed, result.failed))
        self.assertEqual('fail', result.results[UNFORMATTED_RW.name])
        self.assertIn(f'{UNFORMATTED_RW.name}: the image changed',
                      result.error)


class MountsUnderTest(unittest.TestCase):

    def test_the_mounts_below_a_directory(self):
        mounts = ('/dev/loop0 /tmp/d/mounts/staging ext4 ro 0 0\n'
                  '/dev/loop0 /tmp/d/mounts/target ext4 ro 0 0\n'
                  '/dev/sda1 /tmp/dx ext4 rw 0 0\n')
        with mock.patch.object(cinder_csi_node.Path, 'read_text',
                               return_value=mounts), \
                mock.patch.object(cinder_csi_node.Path, 'resolve',
                                  lambda path: path):
            self.assertEqual(['/tmp/d/mounts/staging',
                              '/tmp/d/mounts/target'],
                             cinder_csi_node.mounts_under('/tmp/d'))
