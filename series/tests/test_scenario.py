"""Tests of series.cloud.scenario that need no cloud: one table of named
steps, numbered on through the faults to the upstream suites, which are
not reconciled; what needs a failed step entered as not run; the tempest
and client functional steps report each test and fail on a run's error,
a skip or no test; a cloud left on the pristine releases is refused.
"""

import functools
import re
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
from series.cloud import upgrade_phases
from series import config
from series import suites
from series.tests import base

UPSTREAM = ((tempest, scenario.upstream_tempest, 'tempest'),
            (sdk_functional, scenario.UPSTREAM_STEPS[1].function,
             'openstacksdk'),
            (osc_functional, scenario.UPSTREAM_STEPS[2].function,
             'openstackclient'))


def call(function):
    """What calling a partial runs: its function, arguments, keywords."""
    return function.func, function.args, function.keywords


class RunStepsTest(unittest.TestCase):
    """What run_steps() runs, in which order, and how."""

    def run_steps(self, failed):
        ran = []

        def run_step(tracker, step, number, function):
            ran.append((number, step, call(function)))
            return step.name not in failed
        made = Tracker(mock.Mock())
        self.made = made
        with mock.patch.object(scenario.steps, 'run_step', run_step), \
                mock.patch.object(scenario.steps, 'say'):
            self.assertIs(made.report, scenario.run_steps(made))
        made.cloud.delete_leftovers.assert_called_once_with()
        return ran

    def test_every_step_then_the_faults_then_upstream_unreconciled(self):
        ran = self.run_steps(failed={'attach-modes'})
        expected = (*scenario.STEPS, *faults.FAULTS, *scenario.UPSTREAM_STEPS)
        self.assertEqual(expected, scenario.SCENARIO)
        self.assertEqual(list(range(1, len(expected) + 1)),
                         [number for number, _, _ in ran])
        self.assertEqual(
            [(step, call(functools.partial(step.function, self.made)))
             for step in expected],
            [(step, function) for _, step, function in ran])
        upstream = len(scenario.UPSTREAM_STEPS)
        self.assertEqual([True] * (len(expected) - upstream) +
                         [False] * upstream,
                         [step.reconcile for _, step, _ in ran])
        self.assertEqual(['tempest', 'openstacksdk-functional',
                          'openstackclient-functional',
                          'gophercloud-acceptance'],
                         [step.name for _, step, _ in ran[-upstream:]])

    def test_names_are_unique_and_each_needs_an_earlier_step(self):
        names = [step.name for step in scenario.SCENARIO]
        self.assertEqual(len(names), len(set(names)))
        for number, step in enumerate(scenario.SCENARIO):
            if step.needs:
                self.assertIn(step.needs, names[:number], step.name)

    def test_what_needs_a_failed_multi_create_is_entered_not_run(self):
        ran = self.run_steps(failed={'multi-create'})
        not_needing = [step for step in scenario.SCENARIO
                       if step.needs != 'multi-create']
        self.assertEqual(['multi-create', 'cinder-volume-killed', 'tempest',
                          'openstacksdk-functional',
                          'openstackclient-functional',
                          'gophercloud-acceptance'],
                         [step.name for step in not_needing])
        self.assertEqual(not_needing, [step for _, step, _ in ran])
        entries = self.made.report.steps
        self.assertEqual(len(scenario.SCENARIO) - len(not_needing),
                         len(entries))
        self.assertEqual(
            {'step': 'rabbitmq-restarted',
             'number': scenario.SCENARIO.index(faults.FAULTS[2]) + 1,
             'title': faults.FAULTS[2].title, 'passed': False,
             'detail': 'not run: it needs multi-create, which did not pass',
             'seconds': 0.0, 'hosts': {}}, entries[-1])

    def test_each_step_is_given_the_tracker(self):
        made = Tracker(mock.Mock())
        with mock.patch.object(scenario.steps, 'run_step') as run_step:
            scenario.run_steps(made)
        for call_ in run_step.call_args_list:
            self.assertIs(made, call_.args[0])
            self.assertEqual((made,), call_.args[3].args)


class ManualTest(unittest.TestCase):
    """The manual lists the scenario's steps and the upgrade's phases by
    their names, in the order they run (its numbers are the list's).
    """

    def test_the_manual_names_every_step_and_phase_in_order(self):
        listed = re.findall(r'^#\. ``([a-z0-9-]+)``:', (
            config.ROOT / 'doc' / 'source' / 'cloud.rst').read_text(), re.M)
        self.assertEqual(
            [step.name for step in scenario.SCENARIO] +
            [phase.name for phase in upgrade_phases.PHASES], listed)


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
