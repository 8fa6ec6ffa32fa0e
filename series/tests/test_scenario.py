"""Tests of series.cloud.scenario that need no cloud. The read-only
prefilter step counts its checks only while
the trait it removed stayed removed, with the incapable host's
nova-compute restarted without provider refresh for the step. A guest
restart is shown by a new boot id and a running guest by the same one;
an RBD image a guest had rw must have changed; a step passes only if the
ledger agrees with what the cloud holds.
"""

import unittest
from unittest import mock

from series.cloud.client import Failed
from series.cloud import scenario
from series import config


class TraitCloud:
    """Placement as the step sees it: whether nova-compute put the trait
    back during each attempt.
    """

    def __init__(self, put_back):
        self.put_back = list(put_back)
        self.present = True
        self.changes = []
        self.calls = []

    def image(self):
        return 'image'

    def set_trait(self, host, trait, present):
        self.changes.append((host, trait, present))
        self.present = present

    def traits(self, host):
        self.calls.append('traits')
        if self.put_back.pop(0):
            self.present = True
        return {scenario.READ_ONLY_TRAIT} if self.present else set()

    def delete_server(self, server_id):
        pass

    def wait_deleted(self, server_ids):
        pass


class ReadOnlyPrefilterTest(unittest.TestCase):

    def run_step(self, put_back, checks):
        runner = scenario.Scenario.__new__(scenario.Scenario)
        runner.cloud = TraitCloud(put_back)
        runner.new_volume = mock.Mock(return_value='root')
        runner.prefilter_checks = mock.Mock(side_effect=checks)
        runner.provider_refresh = mock.Mock()

        def takes_rw(root, host, created):
            runner.cloud.calls.append('rw')
            return 'rw'
        runner.prefilter_takes_rw = takes_rw
        with mock.patch.object(scenario, 'say'):
            try:
                return runner.read_only_prefilter(), runner
            except (Failed, config.SeriesError) as error:
                return error, runner

    def test_checks_that_held_count(self):
        outcome, runner = self.run_step([False], ['checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual([False, True], [present for _, _, present in
                                         runner.cloud.changes])
        self.assertTrue(runner.cloud.present)

    def test_checks_again_after_the_trait_came_back(self):
        outcome, runner = self.run_step(
            [True, False], [Failed('ro server on mae-compute-b'), 'checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual(2, runner.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_a_timeout_after_the_trait_came_back_checks_again(self):
        # The scheduler took the host with the trait back for the cold
        # migration: the wait for the refused migration timed out.
        outcome, runner = self.run_step(
            [True, False], [config.SeriesError(
                "timeout waiting for 'conductor_migrate_server Error'"),
                'checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual(2, runner.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_a_timeout_while_the_trait_was_missing_fails(self):
        error, runner = self.run_step([False], [config.SeriesError(
            "timeout waiting for 'conductor_migrate_server Error'")])
        self.assertIsInstance(error, config.SeriesError)
        self.assertEqual(1, runner.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_the_step_runs_without_provider_refresh(self):
        outcome, runner = self.run_step([False], ['checked'])
        self.assertEqual([mock.call('mae-compute-b', False),
                          mock.call('mae-compute-b', True)],
                         runner.provider_refresh.call_args_list)
        # Restarted before the trait is removed, again after it is back,
        # also when the checks fail.
        refresh = []
        runner = scenario.Scenario.__new__(scenario.Scenario)
        runner.cloud = TraitCloud([False])
        runner.new_volume = mock.Mock(return_value='root')
        runner.prefilter_checks = mock.Mock(
            side_effect=[Failed('ro server on mae-compute-b')])
        runner.provider_refresh = lambda host, on: refresh.append(
            (host, on, runner.cloud.present))
        with mock.patch.object(scenario, 'say'), \
                self.assertRaises(Failed):
            runner.read_only_prefilter()
        self.assertEqual([('mae-compute-b', False, True),
                          ('mae-compute-b', True, True)], refresh)

    def test_the_trait_is_read_before_the_host_takes_a_server(self):
        # The rw server's claim is the host's first write to placement.
        outcome, runner = self.run_step([False], ['checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual(['traits', 'rw'], runner.cloud.calls)

    def test_a_failure_while_the_trait_was_missing_fails(self):
        error, runner = self.run_step([False],
                                      [Failed('ro server on mae-compute-b')])
        self.assertIsInstance(error, Failed)
        self.assertIn('mae-compute-b', str(error))
        self.assertEqual(1, runner.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_the_trait_coming_back_every_time_fails(self):
        error, runner = self.run_step([True, True], ['checked', 'checked'])
        self.assertIsInstance(error, Failed)
        self.assertIn('came back', str(error))
        self.assertTrue(runner.cloud.present)


class BootTest(unittest.TestCase):

    def test_a_restart_needs_a_new_boot_id(self):
        self.assertEqual([], scenario.boot_problems('aa', 'bb', 'restarted'))
        self.assertEqual(['the guest kept its boot aa: it did not restart'],
                         scenario.boot_problems('aa', 'aa', 'restarted'))

    def test_a_running_guest_keeps_its_boot_id(self):
        self.assertEqual([], scenario.boot_problems('aa', 'aa', 'kept'))
        self.assertEqual(['the guest restarted (boot aa -> bb)'],
                         scenario.boot_problems('aa', 'bb', 'kept'))

    def test_no_claim_or_no_earlier_boot(self):
        self.assertEqual([], scenario.boot_problems('aa', 'bb', None))
        self.assertEqual([], scenario.boot_problems(None, 'bb', 'kept'))


class ImageTest(unittest.TestCase):

    def test_an_rw_volume_must_have_changed(self):
        self.assertEqual([], scenario.image_problems('data', 'v', True, 'rw'))
        self.assertEqual(['data (v) unchanged although a guest had it rw'],
                         scenario.image_problems('data', 'v', False, 'rw'))

    def test_a_volume_never_rw_must_not_have_changed(self):
        self.assertEqual([], scenario.image_problems('root', 'v', False,
                                                     None))
        self.assertEqual(['root (v) changed although never attached rw'],
                         scenario.image_problems('root', 'v', True, None))

    def test_a_migration_copy_may_change_it_or_not(self):
        for changed in (True, False):
            self.assertEqual([], scenario.image_problems(
                'swapped', 'v', changed, 'copy'))


class ReconcileTest(unittest.TestCase):
    """A step passes only if the ledger agrees with the cloud."""

    def run_step(self, seen):
        runner = scenario.Scenario(cloud=mock.Mock())
        runner.cloud.servers.return_value = []
        runner.ledger.place('s1', 'mae-compute-a')
        with mock.patch.object(scenario.ledger, 'observe',
                               return_value=seen):
            passed = runner.step(1, 'a step', lambda: 'done')
        return passed, runner.report['steps'][-1]

    def seen(self, host):
        return {'servers': {'s1': host}, 'nova': [], 'cinder': [],
                'domains': {host: ['s1']}}

    def test_agreeing_cloud_passes_and_is_reported(self):
        passed, entry = self.run_step(self.seen('mae-compute-a'))
        self.assertTrue(passed)
        self.assertEqual({'s1': 'mae-compute-a'},
                         entry['expected']['servers'])
        self.assertEqual(self.seen('mae-compute-a'), entry['seen'])

    def test_disagreeing_cloud_fails_the_step(self):
        passed, entry = self.run_step(self.seen('mae-compute-b'))
        self.assertFalse(passed)
        self.assertIn('server s1 is on mae-compute-b', entry['detail'])

    def test_a_step_not_reconciled(self):
        runner = scenario.Scenario(cloud=mock.Mock())
        runner.cloud.servers.return_value = []
        runner.ledger.place('s1', 'mae-compute-a')
        with mock.patch.object(scenario.ledger, 'observe') as observe:
            self.assertTrue(runner.step(1, 'tempest', lambda: 'done',
                                        reconcile=False))
        observe.assert_not_called()


if __name__ == '__main__':
    unittest.main()
