"""Tests of series.cloud.tempest: the tests it selects, the worker each
runs on, its verdict on the series' own tests, and what it takes from
the upstream gate job that runs them (the options the series adds to the
job's tempest configuration, the tests the job selects).
"""

import configparser
import json
import re
import unittest
from unittest import mock

from series.cloud import service_venv
from series.cloud import tempest
from series import config
from series import suites
from series.tests import base

NOVA_PATCHES = config.ROOT / 'patches' / 'nova'
# nova-next's regexes and tempest options as Nova 34.0.0 ships them.
NOVA_NEXT = {
    'tempest_test_regex':
        r'^tempest\.((scenario|api\.compute)|(.*\.(novnc|spice).*))',
    'tempest_exclude_regex':
        r'^tempest\.(scenario\.test_network_(?!qos)|api\.compute\.admin\.'
        r'test_volume_swap)|tempest.api.compute.servers.test_device_tagging.'
        r'TaggedAttachmentsTest.test_tagged_attachment|'
        r'test_live_migration_with_trunk',
    'devstack_local_conf': {'test-config': {'$TEMPEST_CONFIG': {
        'compute-feature-enabled': {'ide_bus': False,
                                    'unified_limits': True}}}}}


def with_options(job, **options):
    """`job` with `options` added to its compute-feature-enabled."""
    job = json.loads(json.dumps(job))
    job['devstack_local_conf']['test-config']['$TEMPEST_CONFIG'][
        'compute-feature-enabled'].update(options)
    return job


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

    def series_result(self, statuses, job=NOVA_NEXT):
        """A tempest SuiteResult: a test of another class passed, and one
        test of each series class with its status from `statuses` (passed
        when not named), or none for None; judged for `job`.
        """
        results = {'tempest.api.compute.volumes.test_attach_volume.'
                   'AttachVolumeTestJSON.test_x': 'success'}
        for prefix in tempest.SERIES_TESTS:
            name = prefix.split('.')[-2]
            status = statuses.get(name, 'success')
            if status:
                results[prefix + 'test_x'] = status
        for prefix in tempest.UPSTREAM_TESTS:
            name = prefix.rstrip('.').split('.')[-1]
            status = statuses.get(name, 'success')
            if status:
                test = prefix + ('test_x' if prefix.endswith('.') else '')
                results[test + '[id-1]'] = status
        result = suites.SuiteResult('tempest', results=results)
        result.count()
        return tempest.series_tests_passed(result, job)

    def test_the_series_tests_passed(self):
        result = self.series_result({})
        self.assertEqual((8, 0, ''), (result.passed, result.failed,
                                      result.error))

    def test_a_series_test_skipped_fails(self):
        result = self.series_result({'AttachVolumeModeGuestTest': 'skip'})
        self.assertEqual((7, 1, 1), (result.passed, result.failed,
                                     result.skipped))
        self.assertIn('AttachVolumeModeGuestTest.test_x skip', result.error)

    def test_a_series_class_not_in_the_run_fails(self):
        result = self.series_result({'AttachVolumeModeMultiCreateTest': None})
        self.assertEqual(1, result.failed)
        self.assertIn('AttachVolumeModeMultiCreateTest.* ran', result.error)

    def test_an_upstream_test_skipped_or_absent_fails(self):
        result = self.series_result({'AttachVolumeAsyncTestJSON': 'skip',
                                     'test_boot_from_multiattach_volume':
                                     None})
        self.assertEqual(1, result.failed)
        self.assertIn('the upstream test tempest.api.compute.volumes.'
                      'test_attach_volume.AttachVolumeAsyncTestJSON.test_x'
                      '[id-1] skip', result.error)
        self.assertIn('AttachVolumeMultiAttachTest.test_boot_from_'
                      'multiattach_volume* ran', result.error)

    def test_a_series_test_the_job_does_not_run_fails(self):
        job = dict(NOVA_NEXT, tempest_exclude_regex='AttachVolumeModeGuest')
        result = self.series_result({}, job)
        self.assertEqual(1, result.failed)
        self.assertIn('AttachVolumeModeGuestTest.test_x is not one nova-next '
                      'runs', result.error)


class RunTest(base.RootTestCase):

    def test_its_run_is_read_from_a_repository_of_its_own(self):
        session = mock.Mock()
        session.get.side_effect = lambda service, path: (
            {'images': [{'id': 'image'}]} if service == 'glance-api'
            else {'flavors': [{'name': 'm1', 'id': '1'}]})
        with mock.patch.object(tempest, 'nova_job',
                               return_value=(NOVA_NEXT, NOVA_NEXT)), \
                mock.patch.object(tempest, 'tempest_conf', return_value=''):
            base.assert_a_repository_of_its_own(self, tempest.run, session)


class JobTest(base.RootTestCase):
    """The options the series adds to the job, and tempest.conf."""

    def test_the_options_the_series_adds(self):
        patched = with_options(NOVA_NEXT, volume_attach_read_only=True)
        self.assertEqual(
            {'compute-feature-enabled': {'volume_attach_read_only': True}},
            tempest.series_options(patched, NOVA_NEXT))

    def test_an_option_the_series_changes(self):
        patched = with_options(NOVA_NEXT, ide_bus=True)
        self.assertEqual({'compute-feature-enabled': {'ide_bus': True}},
                         tempest.series_options(patched, NOVA_NEXT))

    def test_a_job_the_series_leaves_alone_adds_nothing(self):
        self.assertEqual({}, tempest.series_options(NOVA_NEXT, NOVA_NEXT))

    def conf(self, job_options):
        parser = configparser.ConfigParser(strict=False,
                                           interpolation=None)
        parser.read_string(tempest.tempest_conf(
            None, 'image', {'mae.tiny': '1', 'mae.small': '2'},
            job_options))
        return parser

    def test_tempest_conf_takes_the_series_options_from_the_job(self):
        added = tempest.series_options(
            with_options(NOVA_NEXT, volume_attach_read_only=True), NOVA_NEXT)
        self.assertEqual('True', self.conf(added).get(
            'compute-feature-enabled', 'volume_attach_read_only'))
        # The rest of the section stays.
        self.assertEqual('true', self.conf(added).get(
            'compute-feature-enabled', 'volume_multiattach'))

    def test_tempest_conf_has_each_section_once(self):
        added = {'compute-feature-enabled': {'volume_attach_read_only': True}}
        self.assertEqual(
            ['auth', 'identity', 'identity-feature-enabled', 'compute',
             'compute-feature-enabled', 'volume', 'service_available',
             'validation'], self.conf(added).sections())
        text = tempest.tempest_conf(None, 'image', {'mae.tiny': '1',
                                                    'mae.small': '2'}, {})
        self.assertEqual(1, text.count('[DEFAULT]'))
        self.assertNotIn('\n\n\n', text)

    def test_tempest_conf_sets_no_series_option_by_hand(self):
        self.assertFalse(self.conf({}).has_option(
            'compute-feature-enabled', 'volume_attach_read_only'))

    def test_nova_series_sets_the_option_in_the_job(self):
        [patch] = NOVA_PATCHES.glob(f'*-zuul-*-in-{tempest.JOB}.patch')
        self.assertRegex(patch.read_text(), r'(?m)^\+ +volume_attach_read_'
                         r'only: True$')

    def test_the_job_selects_as_tempest_run_does(self):
        volumes = 'tempest.api.compute.volumes.'
        self.assertTrue(tempest.job_selects(
            NOVA_NEXT, volumes + 'test_attach_volume_mode.AttachVolumeMode'
            'GuestTest.test_x'))
        self.assertFalse(tempest.job_selects(
            NOVA_NEXT, 'tempest.api.compute.admin.test_volume_swap.'
            'TestVolumeSwap.test_x'))
        self.assertFalse(tempest.job_selects(
            NOVA_NEXT, 'tempest.api.volume.test_volumes_get.T.test_x'))


ZUUL_YAML = """\
- job:
    name: nova-base
    irrelevant-files: &irrelevant
      - ^doc/.*$
- job:
    name: nova-next
    irrelevant-files: *irrelevant
    vars:
      tempest_test_regex: ^tempest\\.api
      devstack_local_conf:
        test-config:
          $TEMPEST_CONFIG:
            compute-feature-enabled:
              volume_attach_read_only: True
- project:
    check:
      jobs:
        - nova-next
"""


class ReadJobTest(unittest.TestCase):
    """job_vars() with PyYAML, from the cloud's virtualenv (CI runs this
    once the virtualenvs exist; the tool itself needs no PyYAML).
    """

    def test_the_jobs_vars(self):
        python = service_venv.bin('python')
        if not python.exists():
            self.skipTest('no cloud virtualenv')
        self.assertEqual(
            {'tempest_test_regex': r'^tempest\.api',
             'devstack_local_conf': {'test-config': {'$TEMPEST_CONFIG': {
                 'compute-feature-enabled': {
                     'volume_attach_read_only': True}}}}},
            tempest.job_vars(python, ZUUL_YAML))
