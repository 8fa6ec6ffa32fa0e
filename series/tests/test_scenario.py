"""Tests of series.cloud.scenario that need no cloud: the steps in their
order, numbered on through the faults to the upstream suites, which are
not reconciled, and none after a failed step 1 but those; the tempest
and client functional steps report each test and fail on a run's error,
a skip or no test; a cloud left on the pristine releases is refused.
"""

import functools
import unittest
from unittest import mock

from series.cloud.client import Failed
from series.cloud import faults
from series.cloud import osc_functional
from series.cloud import releases
from series.cloud import scenario
from series.cloud import sdk_functional
from series.cloud import tempest
from series.cloud.tracker import Tracker
from series import config
from series import suites
from series.tests import base

UPSTREAM = ((tempest, scenario.upstream_tempest, 'tempest'),
            (sdk_functional, scenario.UPSTREAM_STEPS[1][1], 'openstacksdk'),
            (osc_functional, scenario.UPSTREAM_STEPS[2][1],
             'openstackclient'))


def call(function):
    """What calling a partial runs: its function, arguments, keywords."""
    return function.func, function.args, function.keywords


class RunStepsTest(unittest.TestCase):
    """What run_steps() runs, in which order, and how."""

    def run_steps(self, failed):
        ran = []

        def run_step(tracker, number, title, function, reconcile=True):
            ran.append((number, title, call(function), reconcile))
            return number not in failed
        made = Tracker(mock.Mock())
        self.made = made
        with mock.patch.object(scenario.steps, 'run_step', run_step):
            self.assertIs(made.report, scenario.run_steps(made))
        made.cloud.delete_leftovers.assert_called_once_with()
        return ran

    def test_every_step_then_the_faults_then_upstream_unreconciled(self):
        ran = self.run_steps(failed={2})
        tables = (scenario.STEPS, faults.FAULTS, scenario.UPSTREAM_STEPS)
        expected = [entry for table in tables for entry in table]
        self.assertEqual(list(range(1, len(expected) + 1)),
                         [number for number, _, _, _ in ran])
        self.assertEqual(
            [(title, call(functools.partial(function, self.made)))
             for title, function in expected],
            [(title, function) for _, title, function, _ in ran])
        self.assertEqual([True] * (len(expected) - 3) + [False] * 3,
                         [reconcile for _, _, _, reconcile in ran])
        self.assertEqual(13, len(scenario.STEPS))
        self.assertEqual('upstream tempest', ran[-3][1].split(':')[0])

    def test_a_failed_step_1_leaves_out_the_other_steps_only(self):
        ran = self.run_steps(failed={1})
        first_fault = len(scenario.STEPS) + 1
        self.assertEqual(
            [1] + list(range(first_fault, first_fault + len(faults.FAULTS) +
                             len(scenario.UPSTREAM_STEPS))),
            [number for number, _, _, _ in ran])

    def test_each_step_is_given_the_tracker(self):
        made = Tracker(mock.Mock())
        with mock.patch.object(scenario.steps, 'run_step') as run_step:
            scenario.run_steps(made)
        for call in run_step.call_args_list:
            self.assertIs(made, call.args[0])
            self.assertEqual((made,), call.args[3].args)


class RunReportTest(unittest.TestCase):
    """The tempest and client functional steps: report.json's sections,
    and the step's verdict, from the SuiteResult of the run.
    """

    def run_step(self, module, step, result):
        made = Tracker(mock.Mock())
        with mock.patch.object(module, 'run', return_value=result):
            try:
                return step(made), made.report.to_json()
            except Failed as failure:
                return failure, made.report.to_json()

    def result(self, results, error=''):
        result = suites.SuiteResult('run', results=results)
        result.count()
        if error:
            result.fail(error)
        return result

    def test_each_test_with_its_status(self):
        for module, step, section in UPSTREAM:
            detail, report = self.run_step(module, step, self.result(
                {'m.T.test_a': 'success', 'm.T.test_b': 'success'}))
            self.assertEqual('2 passed, 0 failed, 0 skipped',
                             detail.split(': ', 1)[1])
            self.assertEqual({'m.T.test_a': 'success',
                              'm.T.test_b': 'success'},
                             report[section]['tests'])

    def test_a_run_with_an_error_and_no_failed_test_fails(self):
        for module, step, section in UPSTREAM:
            failure, report = self.run_step(module, step, self.result(
                {'m.T.test_a': 'success'}, 'stestr exited 1 with no test '
                'failed'))
            self.assertIsInstance(failure, Failed)
            self.assertIn('stestr exited 1', str(failure))
            self.assertEqual(1, report[section]['failed'])
            self.assertEqual(['stestr exited 1 with no test failed'],
                             report[section]['failures'])

    def test_a_skipped_client_test_fails(self):
        for module, step, section in UPSTREAM[1:]:
            failure, report = self.run_step(module, step, self.result(
                {'m.T.test_a': 'success', 'm.T.test_b': 'skip'}))
            self.assertIsInstance(failure, Failed)
            self.assertEqual(1, report[section]['skipped'])

    def test_no_test_fails(self):
        for module, step, _ in UPSTREAM:
            failure, _ = self.run_step(module, step, self.result({}))
            self.assertIsInstance(failure, Failed)


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
