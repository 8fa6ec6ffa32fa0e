"""Tests of series.cloud.tempest: the tests it selects, the worker each
runs on, and its verdict on the series' own tests.
"""

import json
import re
import unittest

from series.cloud import tempest
from series import config
from series import suites


class TempestTest(unittest.TestCase):

    def test_selection(self):
        def selected(test):
            return bool(re.search('|'.join(tempest.TESTS), test))
        volumes = 'tempest.api.compute.volumes.'
        admin = 'tempest.api.compute.admin.'
        for test in (volumes + 'test_attach_volume_mode.AttachVolumeMode'
                     'MultiCreateTest.test_x[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_list_get_volume_attachments_multiattach'
                     '[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_boot_from_multiattach_volume[id-1]',
                     volumes + 'test_attach_volume_negative.AttachVolume'
                     'NegativeTest.test_attach_attached_volume_to_different_'
                     'server[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeAsyncTestJSON.'
                     'test_attach_list_detach_volume[id-1]'):
            self.assertTrue(selected(test), test)
        for test in (volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_boot_from_multiattach_volume_direct_lun'
                     '[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeMultiAttach'
                     'Test.test_resize_server_with_multiattached_volume'
                     '[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeTestJSON.'
                     'test_attach_detach_volume[id-1]',
                     volumes + 'test_attach_volume.AttachVolumeShelveTestJSON'
                     '.test_x[id-1]',
                     volumes + 'test_attach_volume_negative.AttachVolume'
                     'NegativeTest.test_delete_attached_volume[id-1]',
                     volumes + 'test_volumes_get.VolumesGetTestJSON.test_x'
                     '[id-1]',
                     admin + 'test_live_migration.LiveMigrationTest.'
                     'test_volume_backed_live_migration[id-1,volume]',
                     admin + 'test_migrations.MigrationsAdminTest.'
                     'test_cold_migration[id-1]'):
            self.assertFalse(selected(test), test)

    def test_each_test_on_one_worker(self):
        # As stestr's --worker-file reads it: a worker runs the ids one of
        # its regexes re.search()es.
        workers = [[re.compile(regex) for regex in worker['worker']]
                   for worker in json.loads(tempest.workers())]
        volumes = 'tempest.api.compute.volumes.'
        first = (volumes + 'test_attach_volume_mode.AttachVolumeModeGuest'
                 'Test.test_x[id-1]',
                 volumes + 'test_attach_volume_mode.AttachVolumeModeMulti'
                 'CreateTest.test_x[id-1]',
                 volumes + 'test_attach_volume.AttachVolumeMultiAttachTest.'
                 'test_boot_from_multiattach_volume[id-1]')
        second = (volumes + 'test_attach_volume_mode.AttachVolumeModeTest.'
                  'test_x[id-1]',
                  volumes + 'test_attach_volume.AttachVolumeMultiAttachTest.'
                  'test_list_get_volume_attachments_multiattach[id-1]',
                  volumes + 'test_attach_volume_negative.AttachVolume'
                  'NegativeTest.test_x[id-1]')
        for test in first + second:
            on = [number for number, regexes in enumerate(workers)
                  if any(regex.search(test) for regex in regexes)]
            self.assertEqual([0 if test in first else 1], on, test)

    def test_the_series_tests_are_selected_and_in_its_patch(self):
        patch = next((config.ROOT / 'patches' / 'tempest').glob('0002-*'))
        defined = re.findall(r'^\+class (\w+)\(', patch.read_text(), re.M)
        for prefix in tempest.SERIES_TESTS:
            self.assertIn(prefix.split('.')[-2], defined)
            self.assertTrue(re.search('|'.join(tempest.TESTS),
                                      prefix + 'test_x'), prefix)

    def series_result(self, statuses):
        """A tempest SuiteResult: a test of another class passed, and one
        test of each series class with its status from `statuses` (passed
        when not named), or none for None.
        """
        results = {'tempest.api.compute.volumes.test_attach_volume.'
                   'AttachVolumeTestJSON.test_x': 'success'}
        for prefix in tempest.SERIES_TESTS:
            name = prefix.split('.')[-2]
            status = statuses.get(name, 'success')
            if status:
                results[prefix + 'test_x'] = status
        result = suites.SuiteResult('tempest', results=results)
        result.count()
        return tempest.series_tests_passed(result)

    def test_the_series_tests_passed(self):
        result = self.series_result({})
        self.assertEqual((4, 0, ''), (result.passed, result.failed,
                                      result.error))

    def test_a_series_test_skipped_fails(self):
        result = self.series_result({'AttachVolumeModeGuestTest': 'skip'})
        self.assertEqual((3, 1, 1), (result.passed, result.failed,
                                     result.skipped))
        self.assertIn('AttachVolumeModeGuestTest.test_x skip', result.error)

    def test_a_series_class_not_in_the_run_fails(self):
        result = self.series_result({'AttachVolumeModeMultiCreateTest': None})
        self.assertEqual(1, result.failed)
        self.assertIn('AttachVolumeModeMultiCreateTest.* ran', result.error)
