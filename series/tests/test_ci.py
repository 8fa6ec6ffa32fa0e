"""Tests of series.ci: the standalone clone step."""

import os
import subprocess
import sys
import threading
import unittest
from unittest import mock

from series import ci
from series.cloud.tracker import Report
from series.cloud.tracker import UpgradeReport
from series import config
from series.tests import base


class StandaloneCloneTest(base.SeriesTestCase):
    """The CI step that runs the tool from a clone of the repository alone."""

    def commit_tool(self, script):
        tool = self.root / 'tools' / 'series'
        tool.parent.mkdir()
        tool.write_text(script)
        for args in (['init', '-q'], ['add', '-A'],
                     ['commit', '-q', '-m', 'repository']):
            subprocess.run(['git', *args], cwd=self.root, check=True,
                           env=dict(os.environ, **base.AUTHOR))

    def test_commands_run_in_a_clone_with_nothing_beside_it(self):
        # The stand-in tool records where it runs, what sits beside its
        # repository and whether a SERIES_ variable reached it; it answers
        # status and rebase as the tool does, but for the status after the
        # rebase.
        self.commit_tool(
            'import os, sys\n'
            'from pathlib import Path\n'
            'root = Path(__file__).resolve().parents[1]\n'
            'print(sys.argv[1:], root != Path(os.environ["ORIGINAL"]),\n'
            '      sorted(p.name for p in root.parent.iterdir()),\n'
            '      [k for k in os.environ if k.startswith("SERIES_")])\n'
            'if sys.argv[1:] == ["status"]:\n'
            '    print("demo: base demo 1.0, 2 patches")\n'
            'if sys.argv[1] == "rebase":\n'
            '    print("demo: the series now applies to 2.0")\n'
            'if sys.argv[1:] == ["status", "demo"]:\n'
            '    print("demo: base demo 1.0, 2 patches")\n'
            'sys.exit(0)\n')
        with mock.patch.dict(os.environ, {'ORIGINAL': str(self.root),
                                          'SERIES_ROOT': str(self.root)}), \
                mock.patch.object(ci, 'REBASE_PROOF', ('demo', '2.0')):
            result = self.quiet(ci.standalone_clone,
                                config.load_projects())
        # status, the rebase, then status after it, which still names 1.0:
        # the rebase did not pin 2.0.
        self.assertEqual((2, 1), (result.passed, result.failed))
        self.assertIn("tools/series status demo failed in a standalone "
                      "clone (exit 0; expected ['base demo 2.0 ']",
                      result.error)
        log = (self.root / '.work' / 'logs' /
               'standalone-clone.log').read_text()
        self.assertIn("['status'] True ['repository'] []", log)
        self.assertIn("['rebase', 'demo', '2.0'] True ['repository'] []",
                      log)


def entries(*outcomes):
    """Step entries named step-1, step-2...: (passed, detail) each."""
    return [{'step': f'step-{number}', 'number': number, 'passed': passed,
             'detail': detail}
            for number, (passed, detail) in enumerate(outcomes, 1)]


def upgraded(*outcomes, series_again='ok'):
    outcomes = outcomes or [(True, '')] * ci.upgrade.PHASES
    return UpgradeReport(steps=entries(*outcomes), series_again=series_again)


class RealCloudTest(base.SeriesTestCase):

    def run_real_cloud(self, scenario_run, down, upgrade_run=None):
        upgrade_run = upgrade_run or upgraded
        with mock.patch.object(ci.scenario, 'run', scenario_run), \
                mock.patch.object(ci.upgrade, 'run', upgrade_run), \
                mock.patch.object(ci.deploy, 'down', down), \
                mock.patch.object(ci.process, 'say'):
            return ci.real_cloud()

    def test_steps_and_tempest_as_two_results(self):
        report = Report(steps=entries((True, ''), (False, 'no')),
                        tempest={'passed': 3, 'failed': 1, 'skipped': 2,
                                 'failures': ['t.test_a']})
        down = mock.Mock()
        scenario_result, tempest_result, _ = self.run_real_cloud(
            lambda up: report, down)
        self.assertEqual(1, down.call_count)
        self.assertEqual((1, 1, 'step-2: no'),
                         (scenario_result.passed, scenario_result.failed,
                          scenario_result.error))
        self.assertEqual((3, 1, 2, 't.test_a'),
                         (tempest_result.passed, tempest_result.failed,
                          tempest_result.skipped, tempest_result.error))

    def test_the_clients_functional_tests_as_results_of_their_own(self):
        report = Report(
            steps=entries((True, '')),
            tempest={'passed': 3, 'failed': 0, 'skipped': 0,
                     'failures': []},
            openstacksdk={'passed': 2, 'failed': 1, 'skipped': 0,
                          'failures': ['t.test_b']},
            openstackclient={'passed': 3, 'failed': 0, 'skipped': 1,
                             'failures': []})
        results = self.run_real_cloud(lambda up: report, mock.Mock())
        self.assertEqual(
            [('real cloud openstacksdk functional', 2, 1, 0, 't.test_b'),
             ('real cloud python-openstackclient functional', 3, 0, 1, '')],
            [(result.name, result.passed, result.failed, result.skipped,
              result.error) for result in results[2:4]])

    def test_the_scenario_runs_on_the_cloud_the_upgrade_left(self):
        calls = []
        results = self.run_real_cloud(
            lambda up: calls.append(('scenario', up)) or Report(),
            lambda: calls.append('down'),
            lambda: calls.append('upgrade') or upgraded())
        # On the cloud the upgrade left: no `up` again.
        self.assertEqual(['upgrade', ('scenario', False), 'down'], calls)
        self.assertEqual(('real cloud rolling upgrade', ci.upgrade.PHASES,
                          0, ''), (results[-1].name, results[-1].passed,
                                   results[-1].failed, results[-1].error))

    def test_any_failure_is_a_failed_result_and_down_still_runs(self):
        down = mock.Mock(side_effect=config.SeriesError('MariaDB is down'))
        results = self.run_real_cloud(
            mock.Mock(side_effect=KeyError('steps')), down)
        self.assertEqual(1, down.call_count)
        self.assertEqual(2, len(results))
        self.assertEqual((0, 2), (results[0].passed, results[0].failed))
        self.assertEqual("cloud scenario: 'steps'; cloud down: MariaDB is "
                         "down", results[0].error)

    def test_a_failed_phase_and_a_new_cloud_for_the_scenario(self):
        calls = []
        # The phases after a failed one are entered as not run.
        report = upgraded((True, ''), (False, 'Failed: 500'),
                          *[(False, 'not run')] * (ci.upgrade.PHASES - 2),
                          series_again='not tried: a phase failed')
        results = self.run_real_cloud(
            lambda up: calls.append(('scenario', up)) or Report(),
            lambda: calls.append('down'),
            lambda: calls.append('upgrade') or report)
        self.assertEqual(['upgrade', 'down', ('scenario', True), 'down'],
                         calls)
        result = results[-1]
        self.assertEqual('real cloud rolling upgrade', result.name)
        self.assertEqual((1, ci.upgrade.PHASES - 1),
                         (result.passed, result.failed))
        self.assertTrue(result.error.startswith(
            'step-2: Failed: 500; step-3: not run'), result.error)

    def test_a_cloud_not_back_on_the_series_fails_the_upgrade(self):
        calls = []
        report = upgraded(series_again='SeriesError: x')
        results = self.run_real_cloud(
            lambda up: calls.append(('scenario', up)) or Report(),
            lambda: calls.append('down'), lambda: report)
        self.assertEqual(['down', ('scenario', True), 'down'], calls)
        self.assertEqual((ci.upgrade.PHASES, 1, 'back on the series: '
                          'SeriesError: x'),
                         (results[-1].passed, results[-1].failed,
                          results[-1].error))

    def test_an_upgrade_that_raises_fails_every_phase_and_itself(self):
        results = self.run_real_cloud(
            lambda up: Report(), mock.Mock(),
            mock.Mock(side_effect=config.SeriesError('a cloud is up')))
        self.assertEqual((0, ci.upgrade.PHASES + 1, 'cloud upgrade: a cloud '
                          'is up'), (results[-1].passed, results[-1].failed,
                                     results[-1].error))


class LanesTest(unittest.TestCase):

    def test_the_lanes_run_at_once_and_every_result_comes_back(self):
        foreground_started = threading.Event()

        def lane(name):
            # Only true if the foreground runs meanwhile.
            return lambda: [name] if foreground_started.wait(10) else []

        def foreground():
            foreground_started.set()
            return ['cloud']
        self.assertEqual(['cloud', 'nova', 'docs'],
                         ci.lanes(foreground, lane('nova'), lane('docs')))

    def test_a_background_lane_and_its_commands_are_reniced(self):
        def lane():
            own = os.getpriority(os.PRIO_PROCESS,
                                 threading.get_native_id())
            child = subprocess.run(
                [sys.executable, '-c', 'import os; print(os.nice(0))'],
                text=True, stdout=subprocess.PIPE, check=True).stdout
            return [own, int(child)]
        before = os.nice(0)
        after = min(before + ci.process.BACKGROUND_NICE, 19)
        self.assertEqual(
            [before, after, after],
            ci.lanes(lambda: [os.nice(0)], ci.in_the_background(lane)))
        # The caller's thread keeps its priority.
        self.assertEqual(before, os.nice(0))

    def test_without_it_a_lane_keeps_the_priority(self):
        before = os.nice(0)
        self.assertEqual([before], ci.lanes(lambda: [], lambda: [
            os.getpriority(os.PRIO_PROCESS, threading.get_native_id())]))

    def test_a_failed_preparation_is_said_not_raised(self):
        def build():
            raise config.SeriesError('pip failed')
        with mock.patch.object(ci.process, 'say') as say:
            ci.prepare(build)
        say.assert_called_once_with('build: pip failed')


class BesideTheCloudTest(unittest.TestCase):

    def test_nova_functional_then_unit_tests_narrow(self):
        nova = mock.Mock()
        with mock.patch.object(ci.suites, 'test', return_value=[]) as test:
            ci.nova_tests(nova, ci.Timings(), True)
        self.assertEqual(
            [mock.call(nova, unit=False, wide=False),
             mock.call(nova, functional=False, databases=True,
                       background=True, wide=False)],
            test.call_args_list)

    def test_cinder_tests_in_the_background(self):
        cinder = mock.Mock()
        cinder.name = 'cinder'
        with mock.patch.object(ci.suites, 'test', return_value=[]) as test, \
                mock.patch.object(ci.linters, 'lint'), \
                mock.patch.object(ci.suites, 'tool_self_test'), \
                mock.patch.object(ci.contract, 'contract'), \
                mock.patch.object(ci.mutants, 'suite') as mutants, \
                mock.patch.object(ci.each, 'suite') as each, \
                mock.patch.object(ci.queue, 'read_series',
                                  return_value=['0001.patch']):
            ci.cinder_and_devstack(cinder, ci.Timings(), True)
        self.assertEqual(
            [mock.call(cinder, databases=True, background=True)],
            test.call_args_list)
        mutants.assert_called_once_with(ci.CI_MUTANT_PROJECTS)
        each.assert_called_once_with(cinder)

    def test_every_commit_alone_of_each_project_but_nova(self):
        projects = {name: mock.Mock() for name in (
            'nova', 'os-traits', 'openstacksdk', 'python-openstackclient',
            'tempest', 'cinder')}
        for name, project in projects.items():
            project.name = name
            project.kind = 'python'
            project.released_requirement_tests = {}
        projects['python-openstackclient'].released_requirement_tests = {
            'openstacksdk': ['test_refused']}
        with mock.patch.object(ci.patched_docs, 'docs', return_value=[]), \
                mock.patch.object(ci.linters, 'lint'), \
                mock.patch.object(ci.linters, 'typecheck'), \
                mock.patch.object(ci.linters, 'lint_tools'), \
                mock.patch.object(ci.spec, 'spec_checks', return_value=[]), \
                mock.patch.object(ci.manual, 'check', return_value=[]), \
                mock.patch.object(ci.suites, 'test', return_value=[]), \
                mock.patch.object(ci, 'virtualenv_tool_tests'), \
                mock.patch.object(ci.contract, 'contract'), \
                mock.patch.object(ci.suites, 'tool_self_test'), \
                mock.patch.object(ci.mutants, 'suite'), \
                mock.patch.object(ci.each, 'suite') as each, \
                mock.patch.object(ci.released_requirement, 'suite',
                                  return_value=[]) as released, \
                mock.patch.object(ci.queue, 'read_series',
                                  return_value=['0001.patch']):
            ci.docs_and_clients(projects, ci.Timings())
            ci.cinder_and_devstack(projects['cinder'], ci.Timings(), True)
        self.assertEqual(
            sorted(set(projects) - {'nova'}),
            sorted(call.args[0].name for call in each.call_args_list))
        # The client's refusals against the released SDK, its alone.
        released.assert_called_once_with(projects['python-openstackclient'])


class VirtualenvTest(base.SeriesTestCase):

    def test_the_work_tree_is_applied_first_if_there_is_none(self):
        with mock.patch.object(ci.virtualenvs, 'ensure_venv') as ensure_venv:
            self.quiet(ci.virtualenv, self.project)
            self.assertTrue((self.project.tree / '.git').exists())
            marker = self.project.tree / 'left-by-an-earlier-part'
            marker.write_text('')
            self.quiet(ci.virtualenv, self.project)
        # The second time the tree is kept as it is.
        self.assertTrue(marker.exists())
        self.assertEqual([mock.call(self.project)] * 2,
                         ensure_venv.call_args_list)


class TimingsTest(base.SeriesTestCase):

    def test_the_breakdown_is_a_table_with_shares_and_a_total(self):
        timings = ci.Timings()
        timings.parts = [('nova tests', 1800.0), ('real cloud', 600.0)]
        with mock.patch.object(ci.process, 'say') as say:
            timings.print(2400.0)
        lines = [call.args[0] for call in say.call_args_list]
        self.assertEqual(['', f'{"time by part of CI":<44}    min  share',
                          f'{"nova tests":<44}   30.0    75%',
                          f'{"real cloud":<44}   10.0    25%',
                          f'{"total":<44}   40.0'], lines)


class VirtualenvToolTestsTest(unittest.TestCase):
    """The tool tests that skip without a virtualenv fail CI when they
    skip with one.
    """

    def test_a_skip_fails(self):
        skipped = ci.suites.SuiteResult('x', passed=3, skipped=1)
        with mock.patch.object(ci.suites, 'tool_self_test',
                               return_value=skipped):
            result = ci.virtualenv_tool_tests()
        self.assertEqual(1, result.failed)
        self.assertIn('1 skipped with the virtualenvs built', result.error)
