import contextlib
import dataclasses
import io
import os
from pathlib import Path
import subprocess
import tempfile
import unittest
from unittest import mock

from series import config
from series import mutants
from series import suites
from series.tests.base import REPOSITORY
from series.tests.test_suites import stestr_python

GUARDED = '''\
def attach(mode):
    if mode not in ('ro', 'rw'):
        raise ValueError(mode)
    return mode
'''
TESTS = '''\
import unittest

from pkg import guarded


class AttachTest(unittest.TestCase):

    def test_a_bad_mode_is_refused(self):
        self.assertRaises(ValueError, guarded.attach, 'wx')

    def test_ro_is_taken(self):
        self.assertEqual('ro', guarded.attach('ro'))
'''
SKIPPED = '''

class SkippedTest(unittest.TestCase):

    @unittest.skip('never runs')
    def test_nothing(self):
        pass


class FailsTest(unittest.TestCase):

    def test_fails(self):
        self.fail()
'''


def mutant(name='m', find="if mode not in ('ro', 'rw'):",
           replace='if False:', tests=('pkg.test_guarded.AttachTest',)):
    return mutants.Mutant(name=name, project='sample', file='pkg/guarded.py',
                          guard='bad modes are refused', find=find,
                          replace=replace, tests=tuple(tests))


class SampleTree(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tree = Path(tmp.name)
        (self.tree / 'pkg').mkdir()
        (self.tree / 'pkg' / '__init__.py').write_text('')
        (self.tree / 'pkg' / 'guarded.py').write_text(GUARDED)
        (self.tree / 'pkg' / 'test_guarded.py').write_text(TESTS)
        (self.tree / '.stestr.conf').write_text(
            '[DEFAULT]\ntest_path=./pkg\ntop_dir=./\n')
        self.project = mock.Mock(tree=self.tree, unit_tests='pkg',
                                 functional_tests='', test_env={},
                                 known_failures=self.tree / 'none',
                                 kind='python')
        self.project.name = 'sample'


class MutateTest(SampleTree):

    def test_the_text_must_be_in_the_file_once(self):
        for find in ('not in this file', 'mode'):
            with self.assertRaises(config.SeriesError):
                mutants.mutate(self.tree, mutant(find=find))
        self.assertEqual(GUARDED, (self.tree / 'pkg/guarded.py').read_text())

    def test_the_file_is_put_back_when_the_run_is_interrupted(self):
        with mock.patch.object(mutants, 'run_tests',
                               side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                mutants.run_mutant(self.project, None, mutant())
        self.assertEqual(GUARDED, (self.tree / 'pkg/guarded.py').read_text())


class WorktreeTest(unittest.TestCase):

    def test_mutants_go_to_a_worktree_of_head_never_the_work_tree(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        with mock.patch.object(config, 'ROOT', Path(tmp.name)):
            project = config.Project(name='sample', version='1', sha256='0')
            (project.tree / 'pkg').mkdir(parents=True)
            (project.tree / 'pkg' / 'guarded.py').write_text(GUARDED)
            for args in (('init', '-q'), ('add', '-A'),
                         ('-c', 'user.name=t', '-c', 'user.email=t@t',
                          'commit', '-q', '-m', 'sample')):
                subprocess.run(['git', *args], cwd=project.tree, check=True,
                               capture_output=True)
            with mutants.worktree(project) as copy:
                self.assertNotEqual(project.tree, copy.tree)
                mutants.mutate(copy.tree, mutant())
                self.assertIn('if False:',
                              (copy.tree / 'pkg/guarded.py').read_text())
                self.assertEqual(GUARDED, (project.tree / 'pkg/guarded.py')
                                 .read_text())
            self.assertFalse(copy.tree.exists())


class JudgeTest(unittest.TestCase):

    def test_a_failed_test_kills(self):
        result = suites.SuiteResult('x', results={'a': 'success',
                                                  'b': 'fail'})
        self.assertEqual((mutants.KILLED, 'b'),
                         mutants.judge(result, ['a', 'b']))

    def test_a_failed_test_of_a_class_asked_for_kills(self):
        result = suites.SuiteResult('x', results={'m.C.test_a': 'fail'})
        self.assertEqual((mutants.KILLED, 'm.C.test_a'),
                         mutants.judge(result, ['m.C']))

    def test_all_passed_survives(self):
        result = suites.SuiteResult('x', passed=2, results={
            'a': 'success', 'b': 'skip'})
        self.assertEqual(mutants.SURVIVED,
                         mutants.judge(result, ['a', 'b'])[0])

    def test_a_run_without_tests_is_an_error_not_a_kill(self):
        result = suites.SuiteResult('x', failed=1, error='import error')
        self.assertEqual((mutants.ERROR, 'import error'),
                         mutants.judge(result, ['a']))

    def test_a_go_package_that_does_not_build_is_an_error_not_a_kill(self):
        # go_tests.results_of: the package failed, its tests never ran.
        result = suites.SuiteResult('x', results={
            'example.com/m/pkg': 'fail', 'example.com/m/pkg.TestA': 'missing'})
        verdict, detail = mutants.judge(result, ['example.com/m/pkg.TestA'])
        self.assertEqual(mutants.ERROR, verdict)
        self.assertIn('example.com/m/pkg fail', detail)

    def test_a_test_not_asked_for_does_not_kill(self):
        result = suites.SuiteResult('x', passed=1, results={
            'a': 'success', 'other': 'fail'})
        self.assertEqual(mutants.SURVIVED, mutants.judge(result, ['a'])[0])


class VerdictTest(unittest.TestCase):
    """The verb and CI's suite fail unless every mutant is killed."""

    def outcomes(self, *results):
        return [mutants.Outcome(mutant(name=f'm{n}'), result)
                for n, result in enumerate(results)]

    def test_the_verb_fails_on_a_survivor_or_an_error(self):
        for results, code in (((mutants.KILLED,) * 2, 0),
                              ((mutants.KILLED, mutants.SURVIVED), 1),
                              ((mutants.KILLED, mutants.ERROR), 1)):
            with mock.patch.object(mutants, 'run', return_value=(
                    self.outcomes(*results))), \
                    contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(code, mutants.mutants(), results)

    def test_ci_counts_a_survivor_as_failed(self):
        with mock.patch.object(mutants, 'run', return_value=self.outcomes(
                mutants.KILLED, mutants.SURVIVED)), \
                contextlib.redirect_stdout(io.StringIO()):
            result = mutants.suite(['sample'])
        self.assertEqual((1, 1), (result.passed, result.failed))
        self.assertEqual('m1 survived', result.error)


class LoadTest(unittest.TestCase):

    def test_a_name_twice_is_refused(self):
        with tempfile.NamedTemporaryFile('w', suffix='.toml') as f:
            f.write(2 * ('[[mutant]]\nname = "a"\nproject = "nova"\n'
                         'file = "f"\nguard = "g"\nfind = "x"\n'
                         'replace = "y"\ntests = ["t"]\n'))
            f.flush()
            with self.assertRaises(config.SeriesError):
                mutants.load(f.name)

    def test_the_catalogue(self):
        catalogue = mutants.load()
        projects = config.load_projects()
        self.assertGreaterEqual(len(catalogue), 30)
        for entry in catalogue:
            self.assertIn(entry.project, [*projects, mutants.TOOLS])
            self.assertTrue(entry.tests, entry.name)
            self.assertNotEqual(entry.find, entry.replace, entry.name)

    def test_each_tool_mutant_finds_its_text_once(self):
        # The tools are in this repository, so a guard rewritten without
        # its mutant shows here rather than as a mutant error in CI.
        for entry in mutants.load():
            if entry.project == mutants.TOOLS:
                text = (REPOSITORY / entry.file).read_text()
                self.assertEqual(1, text.count(entry.find), entry.name)


class ToolMutantTest(unittest.TestCase):
    """A mutant of this repository's own code: the sample guard in a tree
    that holds the series package (its __init__ and test_ids), its tests
    run there by series.test_ids with this Python.
    """

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tree = Path(tmp.name)
        (self.tree / 'series' / 'tests').mkdir(parents=True)
        for name in ('__init__.py', 'test_ids.py'):
            (self.tree / 'series' / name).write_text(
                (REPOSITORY / 'series' / name).read_text())
        (self.tree / 'series' / 'tests' / '__init__.py').write_text('')
        (self.tree / 'series' / 'guarded.py').write_text(GUARDED)
        (self.tree / 'series' / 'tests' / 'test_guarded.py').write_text(
            TESTS.replace('from pkg import', 'from series import') +
            SKIPPED)
        self.copy = mutants.ToolTree(tree=self.tree)

    def mutant(self, **kwargs):
        return dataclasses.replace(
            mutant(**kwargs), project=mutants.TOOLS,
            file='series/guarded.py', tests=tuple(
                test.replace('pkg.', 'series.tests.')
                for test in kwargs.get('tests', ('pkg.test_guarded.'
                                                 'AttachTest',))))

    def test_removing_the_guard_is_killed(self):
        outcome = mutants.run_mutant(self.copy, None, self.mutant())
        self.assertEqual(mutants.KILLED, outcome.result, outcome.detail)
        self.assertIn('test_a_bad_mode_is_refused', outcome.detail)
        self.assertEqual(GUARDED,
                         (self.tree / 'series/guarded.py').read_text())

    def test_a_change_the_tests_do_not_see_survives(self):
        outcome = mutants.run_mutant(self.copy, None, self.mutant(
            find='raise ValueError(mode)', replace='raise ValueError()'))
        self.assertEqual(mutants.SURVIVED, outcome.result)

    def test_the_control_names_a_test_that_skipped_or_is_absent(self):
        self.assertEqual('', mutants.control(self.copy, None,
                                             [self.mutant()]))
        for test in ('pkg.test_guarded.SkippedTest', 'pkg.test_guarded.Nope'):
            problem = mutants.control(self.copy, None, [self.mutant(
                tests=['pkg.test_guarded.AttachTest', test])])
            self.assertIn(test.replace('pkg.', 'series.tests.'), problem)

    def test_the_control_fails_on_a_test_that_fails_unmutated(self):
        problem = mutants.control(self.copy, None, [self.mutant(
            tests=['pkg.test_guarded.AttachTest',
                   'pkg.test_guarded.FailsTest'])])
        self.assertIn("must pass without a mutant: 2 passed, 1 failed",
                      problem)

    def test_a_series_package_from_elsewhere_is_refused(self):
        # No series package in the tree: PYTHONPATH's, this repository's.
        for name in ('__init__.py', 'test_ids.py'):
            (self.tree / 'series' / name).unlink()
        with mock.patch.dict(os.environ, {'PYTHONPATH': str(REPOSITORY)}):
            result = mutants.run_tool_tests(self.tree, ['sample'], 'x')
        self.assertIn(f'series imported from {REPOSITORY}', result.error)

    def test_a_failing_control_stops_the_run_before_any_mutant(self):
        failing = self.mutant(tests=['pkg.test_guarded.FailsTest'])
        with mock.patch.object(mutants, 'load', return_value=[failing]), \
                mock.patch.object(mutants, 'tool_worktree',
                                  return_value=contextlib.nullcontext(
                                      self.copy)), \
                mock.patch.object(mutants, 'run_mutant') as run_mutant:
            with self.assertRaisesRegex(config.SeriesError,
                                        'must pass without a mutant'):
                mutants.run()
        run_mutant.assert_not_called()

    def test_the_series_package_must_be_the_trees(self):
        (self.tree / 'series' / 'test_ids.py').unlink()
        result = mutants.run_tool_tests(
            self.tree, ['series.tests.test_guarded'], 'x')
        self.assertTrue(result.failed)
        self.assertIn('no result', result.error)
        self.assertEqual(mutants.ERROR, mutants.judge(
            result, ['series.tests.test_guarded'])[0])


@unittest.skipUnless(stestr_python(), 'no virtualenv with stestr')
class RunMutantTest(SampleTree):
    """The real stestr on the sample: the guard's mutant is killed, a
    mutant its tests do not see survives, the control passes.
    """

    def setUp(self):
        super().setUp()
        self.python = stestr_python()
        quiet = contextlib.redirect_stdout(io.StringIO())
        quiet.__enter__()
        self.addCleanup(quiet.__exit__, None, None, None)
        patcher = mock.patch.dict(os.environ, {'OS_TEST_PATH': ''})
        patcher.start()
        self.addCleanup(patcher.stop)
        patcher = mock.patch.object(config, 'ROOT', self.tree)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_removing_the_guard_is_killed(self):
        outcome = mutants.run_mutant(self.project, self.python, mutant())
        self.assertEqual(mutants.KILLED, outcome.result, outcome.detail)
        self.assertIn('test_a_bad_mode_is_refused', outcome.detail)
        self.assertEqual(GUARDED, (self.tree / 'pkg/guarded.py').read_text())

    def test_a_change_the_tests_do_not_see_survives(self):
        outcome = mutants.run_mutant(self.project, self.python, mutant(
            find='raise ValueError(mode)', replace='raise ValueError()'))
        self.assertEqual(mutants.SURVIVED, outcome.result)

    def test_the_control_passes_and_names_an_absent_test(self):
        python = self.python
        self.assertEqual('', mutants.control(self.project, python,
                                             [mutant()]))
        problem = mutants.control(self.project, python, [mutant(
            tests=['pkg.test_guarded.AttachTest', 'pkg.test_guarded.Nope'])])
        self.assertIn("no test ran (or it skipped) for "
                      "['pkg.test_guarded.Nope']", problem)
