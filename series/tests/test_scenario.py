"""Tests of series.cloud.scenario that need no cloud. The read-only
prefilter step counts its checks only while
the trait it removed stayed removed, with the incapable host's
nova-compute restarted without provider refresh for the step. A guest
restart is shown by a new boot id and a running guest by the same one;
an RBD image a guest had rw must have changed; a step passes only if the
ledger agrees with what the cloud holds. The tempest and openstacksdk
steps report each test and fail on a run's error or on no test; only
guest rounds begun after the scenario looked count; each place that
disagrees with the attach mode is named; a cloud left on the pristine
releases is refused.
"""

import unittest
from unittest import mock

from series.cloud.client import Failed
from series.cloud import releases
from series.cloud import scenario
from series.cloud import sdk_functional
from series.cloud import tempest
from series import config
from series import suites
from series.tests import base


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


class RunReportTest(unittest.TestCase):
    """The tempest and openstacksdk steps: report.json's sections, and the
    step's verdict, from the SuiteResult of the run.
    """

    def run_step(self, module, step, result):
        runner = scenario.Scenario.__new__(scenario.Scenario)
        runner.cloud = mock.Mock()
        runner.report = {'tempest': None, 'openstacksdk': None}
        with mock.patch.object(module, 'run', return_value=result):
            try:
                return getattr(runner, step)(), runner.report
            except scenario.Failed as failure:
                return failure, runner.report

    def result(self, results, error=''):
        result = suites.SuiteResult('run', results=results)
        result.count()
        if error:
            result.fail(error)
        return result

    def test_each_test_with_its_status(self):
        for module, step, section in ((tempest, 'tempest', 'tempest'),
                                      (sdk_functional, 'sdk_functional',
                                       'openstacksdk')):
            detail, report = self.run_step(module, step, self.result(
                {'m.T.test_a': 'success', 'm.T.test_b': 'success'}))
            self.assertEqual('2 passed, 0 failed, 0 skipped',
                             detail.split(': ', 1)[1])
            self.assertEqual({'m.T.test_a': 'success',
                              'm.T.test_b': 'success'},
                             report[section]['tests'])

    def test_a_run_with_an_error_and_no_failed_test_fails(self):
        for module, step, section in ((tempest, 'tempest', 'tempest'),
                                      (sdk_functional, 'sdk_functional',
                                       'openstacksdk')):
            failure, report = self.run_step(module, step, self.result(
                {'m.T.test_a': 'success'}, 'stestr exited 1 with no test '
                'failed'))
            self.assertIsInstance(failure, scenario.Failed)
            self.assertIn('stestr exited 1', str(failure))
            self.assertEqual(1, report[section]['failed'])
            self.assertEqual(['stestr exited 1 with no test failed'],
                             report[section]['failures'])

    def test_no_test_fails(self):
        for module, step in ((tempest, 'tempest'),
                             (sdk_functional, 'sdk_functional')):
            failure, _ = self.run_step(module, step, self.result({}))
            self.assertIsInstance(failure, scenario.Failed)


def guest_line(boot, seq, disk='vdb', serial='vol-1', ro=1):
    write = 'FAILED(Operation not permitted)' if ro else 'OK'
    return (f'guest-disk boot={boot} seq={seq} {disk} serial={serial} '
            f'ro={ro} sector=8 bypass={-5 if ro else 0} write={write}\n')


class FreshReportsTest(unittest.TestCase):
    """The scenario counts only guest rounds begun after it looked."""

    class Consoles:
        """A server whose console grows by one round at each read."""

        def __init__(self, console, rounds):
            self.text, self.rounds = console, list(rounds)

        def console(self, server_id):
            text = self.text
            if self.rounds:
                self.text += self.rounds.pop(0)
            return text

        def attachments(self, server_id):
            return [{'volumeId': 'vol-1'}]

    def fresh(self, console, rounds):
        runner = scenario.Scenario.__new__(scenario.Scenario)
        runner.cloud = self.Consoles(console, rounds)
        with mock.patch.object(scenario, 'POLL_SECONDS', 0):
            return runner.fresh_reports(['server'])['server']['vol-1']

    def test_a_round_seen_before_or_first_after_never_counts(self):
        # Rounds 5 and 6 were on the console before the call (6 may have
        # begun before the move); 7 is the first new one, 8 began after
        # it was printed.
        report = self.fresh(guest_line('aaaaaaaa', 5) +
                            guest_line('aaaaaaaa', 6),
                            [guest_line('aaaaaaaa', 7, ro=0),
                             guest_line('aaaaaaaa', 8)])
        self.assertEqual(8, report.seq)

    def test_after_a_reboot_the_rounds_of_the_new_boot(self):
        report = self.fresh(guest_line('aaaaaaaa', 40, ro=0),
                            [guest_line('bbbbbbbb', 1),
                             guest_line('bbbbbbbb', 2)])
        self.assertEqual(('bbbbbbbb', 2), (report.boot, report.seq))


class ExpectedProblemsTest(unittest.TestCase):

    ROW = {'xml_readonly': True, 'qemu_ro': True, 'guest_kernel_ro': True,
           'guest_write': 'FAILED: Operation not permitted',
           'bypass_write': 'EIO', 'rbd_changed': False,
           'rbd_by_guest': False}

    def test_read_only_everywhere(self):
        self.assertEqual([], scenario.expected_problems(self.ROW, True))

    def test_each_place_that_disagrees_is_named(self):
        row = dict(self.ROW, bypass_write='written', rbd_changed=True,
                   rbd_by_guest=True)
        self.assertEqual(['bypass_write=written', 'rbd_changed=True'],
                         scenario.expected_problems(row, True))
        writable = {'xml_readonly': False, 'qemu_ro': False,
                    'guest_kernel_ro': False, 'guest_write': 'OK',
                    'bypass_write': 'written', 'rbd_changed': True,
                    'rbd_by_guest': False}
        self.assertEqual(['the slot was written, not by this guest'],
                         scenario.expected_problems(writable, False))


class RunTest(base.RootTestCase):

    def test_the_scenario_refuses_a_cloud_left_on_the_pristine_releases(self):
        releases.set_release('mae-compute-b', releases.PRISTINE)
        with mock.patch.object(scenario.deploy, 'up') as up, \
                self.assertRaisesRegex(config.SeriesError,
                                       'pristine releases on mae-compute-b'):
            scenario.run()
        up.assert_not_called()


if __name__ == '__main__':
    unittest.main()
