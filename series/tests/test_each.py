"""Tests of series.each: every commit of a series run alone.

The series of a tiny package is checked for real: a git work tree, a
worktree per commit, the tests run in it. With a virtualenv of this
checkout that has stestr, subunit2csv and flake8 (.work/venvs/*, built
by `tools/series test`), they run through suites.run_suite and flake8 as
`tools/series each` runs them; without one, with `python -m unittest`
and a compile check in their place.
"""

import contextlib
import io
import os
import re
import subprocess
import sys
import unittest
from unittest import mock

from series import config
from series import each
from series import python_kind
from series import queue
from series import suites
from series.tests import base


def stestr_python():
    """The Python of a virtualenv of this checkout with stestr,
    subunit2csv and flake8 (os-traits', the smallest, first), or None.
    """
    venvs = base.REPOSITORY / '.work' / 'venvs'
    candidates = sorted(venvs.glob('*/bin'),
                        key=lambda bin: (bin.parent.name != 'os-traits',
                                         bin.parent.name))
    for bin in candidates:
        if all((bin / name).exists() for name in
               ('python', 'stestr', 'subunit2csv', 'flake8')):
            return bin / 'python'
    return None


STESTR_PYTHON = stestr_python()


def run_unittest(project, python, label, unit, functional):
    """`python -m unittest` on the modules in the commit's worktree: what
    runs the tests where no virtualenv has stestr.
    """
    proc = subprocess.run([python, '-m', 'unittest', *unit, *functional],
                          cwd=project.tree, capture_output=True, text=True,
                          env=dict(os.environ, **project.test_env))
    ran = int(re.search(r'^Ran (\d+) test', proc.stderr, re.M).group(1))
    failed = sum(int(n) for n in re.findall(r'(?:failures|errors)=(\d+)',
                                            proc.stderr))
    if proc.returncode and not failed:
        failed = 1
    return [suites.SuiteResult(name=label, passed=ran - failed,
                               failed=failed)]


def compile_check(python, worktree, files):
    """In place of flake8 without a virtualenv: the files compile."""
    return subprocess.run([python, '-m', 'py_compile', *files],
                          cwd=worktree).returncode == 0


def runner():
    """The Python and the runners each's run uses in these tests."""
    if STESTR_PYTHON:
        return STESTR_PYTHON, {}
    return sys.executable, {'run_modules': run_unittest,
                            'run_flake8': compile_check}


CALC = 'def add(a, b):\n    return a {} b\n'

TEST_CALC = '''\
import unittest

from demo import calc


class TestCalc(unittest.TestCase):

    def test_add(self):
        self.assertEqual(3, calc.add(1, 2))
{more}'''

MORE = '''
    def test_add_{name}(self):
        self.assertEqual({a}, calc.add({a}, 0))
'''


class RangeTest(unittest.TestCase):

    COMMITS = [(1, 'a1', 'one'), (2, 'b2', 'two'), (3, 'c3', 'three')]

    def test_every_commit_by_default(self):
        self.assertEqual(self.COMMITS, each.select_range(self.COMMITS))

    def test_from_and_to_are_patch_numbers_both_included(self):
        self.assertEqual(self.COMMITS[1:2],
                         each.select_range(self.COMMITS, 2, 2))
        self.assertEqual(self.COMMITS[1:], each.select_range(self.COMMITS, 2))
        self.assertEqual(self.COMMITS[:2],
                         each.select_range(self.COMMITS, last=2))

    def test_a_range_outside_the_series_is_refused(self):
        for first, last in ((0, 2), (2, 4), (3, 2)):
            with self.assertRaisesRegex(config.SeriesError,
                                        'patches 1 to 3'):
                each.select_range(self.COMMITS, first, last)
        with self.assertRaisesRegex(config.SeriesError, 'no patches'):
            each.select_range([])


class EachTest(base.SeriesTestCase):
    """A series whose second commit breaks a test its third fixes."""

    def setUp(self):
        super().setUp()
        self.quiet(queue.apply, self.project)
        self.write('.stestr.conf',
                   '[DEFAULT]\ntest_path=./demo/tests/unit\ntop_dir=./\n')
        self.write('demo/tests/__init__.py', '')
        self.write('demo/tests/unit/__init__.py', '')
        self.write('demo/calc.py', CALC.format('+'))
        self.write('demo/tests/unit/test_calc.py', TEST_CALC.format(more=''))
        self.commit('Add calc with its test')
        self.write('demo/calc.py', CALC.format('-'))
        self.write('demo/tests/unit/test_calc.py', TEST_CALC.format(
            more=MORE.format(name='zero', a=0)))
        self.commit('Make add subtract')
        self.write('demo/calc.py', CALC.format('+'))
        self.write('demo/tests/unit/test_calc.py', TEST_CALC.format(
            more=MORE.format(name='zero', a=0) + MORE.format(name='one',
                                                             a=1)))
        self.commit('Make add add again')
        self.write('README.rst', 'Calc adds.\n')
        self.commit('Describe calc')
        # As a virtualenv's editable install of the work tree would: HEAD's
        # code is importable, after the current directory.
        self.project.test_env = {'PYTHONPATH': str(self.tree)}
        self.python, self.runners = runner()

    def write(self, path, text):
        (self.tree / path).parent.mkdir(parents=True, exist_ok=True)
        (self.tree / path).write_text(text)

    def with_runners(self, **runners):
        """The Python kind's runners replaced by these tests' (stestr and
        flake8 where no virtualenv has them) and by `runners`.
        """
        stack = contextlib.ExitStack()
        for name, runner in dict(self.runners, **runners).items():
            stack.enter_context(mock.patch.object(python_kind, name, runner))
        return stack

    def run_each(self, first=None, last=None, **runners):
        commits = each.select_range(each.numbered_commits(self.tree), first,
                                    last)
        out = io.StringIO()
        with self.with_runners(**runners), contextlib.redirect_stdout(out):
            rows = each.run_commits(self.project, self.python, commits)
            code = each.print_rows(self.project, rows)
        return rows, code, out.getvalue()

    def state(self):
        """The work tree's HEAD, branch, files and worktrees."""
        return (self.git('rev-parse', 'HEAD'),
                self.git('symbolic-ref', 'HEAD'),
                self.git('status', '--porcelain', '--ignored'),
                self.git('worktree', 'list', '--porcelain'),
                {p: p.read_bytes() for p in sorted(self.tree.rglob('*'))
                 if p.is_file() and '.git' not in p.parts})

    def test_ci_counts_each_commit_as_a_test(self):
        with mock.patch.object(python_kind.virtualenvs, 'ensure_venv',
                               return_value=self.python), \
                self.with_runners(), \
                contextlib.redirect_stdout(io.StringIO()) as out:
            result = each.suite(self.project)
        self.assertEqual((2, 1, 1), (result.passed, result.failed,
                                     result.skipped))
        self.assertEqual('0002 failed', result.error)
        self.assertEqual('2 passed, 1 failed', out.getvalue().splitlines()[-1])

    def test_files_of_a_commit_and_its_test_modules(self):
        commits = each.numbered_commits(self.tree)
        self.assertEqual([(1, 'Add calc with its test'),
                          (2, 'Make add subtract'),
                          (3, 'Make add add again'), (4, 'Describe calc')],
                         [(number, subject)
                          for number, _, subject in commits])
        files = each.files_of_commit(self.tree, commits[1][1])
        self.assertEqual(['demo/calc.py', 'demo/tests/unit/test_calc.py'],
                         files)
        self.assertEqual((['demo.tests.unit.test_calc'], []),
                         python_kind.test_modules_of(self.project, files))
        self.assertEqual(['README.rst'],
                         each.files_of_commit(self.tree, commits[3][1]))

    def test_a_broken_middle_commit_fails_though_head_passes(self):
        before = self.state()
        rows, code, out = self.run_each()
        self.assertEqual(['passed', 'failed', 'passed', 'skipped'],
                         [row['result'] for row in rows])
        self.assertEqual([(1, 0), (1, 1), (3, 0)],
                         [(row['passed'], row['failed']) for row in rows[:3]])
        self.assertEqual(['clean', 'clean', 'clean', '-'],
                         [row['style'] for row in rows])
        self.assertEqual(1, code)
        lines = out.splitlines()
        self.assertEqual('2 passed, 1 failed', lines[-1])
        self.assertRegex(lines[-2], r'^1 skipped \(no test module changed\)')
        table = lines[lines.index('') + 1:-2]
        self.assertEqual(['#', '0001', '0002', '0003', '0004'],
                         [line.split()[0] for line in table])
        self.assertTrue(table[2].endswith('failed'))
        self.assertIn('no test module changed', table[4])
        self.assertTrue(table[4].endswith('skipped'))
        # The work tree is as it was, and no worktree is left.
        self.assertEqual(before, self.state())
        self.assertFalse((self.root / '.work' / 'each' / 'demo').exists())
        # HEAD passes: only a commit alone shows the break.
        rows, code, out = self.run_each(3, 3)
        self.assertEqual((['passed'], 0), ([r['result'] for r in rows], code))
        self.assertEqual('1 passed, 0 failed', out.splitlines()[-1])

    def test_the_commit_is_imported_not_the_work_tree(self):
        worktree = self.root / '.work' / 'each' / 'demo' / '0002'
        commit = each.numbered_commits(self.tree)[1][1]
        each.add_worktree(self.tree, worktree, commit)
        self.addCleanup(each.remove_worktree, self.tree, worktree)
        self.assertEqual(
            str(worktree / 'demo' / '__init__.py'),
            python_kind.imported_from(self.python, worktree, 'demo',
                                      self.project.test_env))
        # What the project's tests load there is the commit's code.
        result = subprocess.run(
            [self.python, '-c',
             'from demo import calc; print(calc.add(1, 2))'],
            cwd=worktree, capture_output=True, text=True,
            env=dict(os.environ, **self.project.test_env))
        self.assertEqual('-1\n', result.stdout)

    def test_another_tree_imported_is_refused(self):
        worktree = self.root / '.work' / 'each' / 'demo' / '0001'
        with mock.patch.object(python_kind, 'imported_from',
                               return_value=str(self.tree / 'demo' /
                                                '__init__.py')), \
                self.assertRaisesRegex(config.SeriesError,
                                       'would not test the commit'):
            self.quiet(python_kind.check_imports, self.project, self.python,
                       worktree, '0001')

    def test_worktrees_are_removed_when_interrupted(self):
        before = self.state()

        def interrupted(*args):
            raise KeyboardInterrupt

        with self.assertRaises(KeyboardInterrupt):
            self.run_each(run_modules=interrupted)
        self.assertEqual(before, self.state())
        self.assertFalse((self.root / '.work' / 'each' / 'demo').exists())

    def test_a_worktree_left_by_a_killed_run_is_removed(self):
        left = self.root / '.work' / 'each' / 'demo' / '0003'
        each.add_worktree(self.tree, left, 'HEAD')
        self.assertIn(str(left), self.git('worktree', 'list'))
        self.run_each(4, 4)
        self.assertNotIn(str(left), self.git('worktree', 'list'))
        self.assertFalse(left.exists())

    def test_flake8_fails_a_commit_whose_tests_pass(self):
        if not STESTR_PYTHON:
            self.skipTest('no virtualenv under .work/venvs/ with stestr and '
                          'flake8 (tools/series test builds one)')
        self.write('demo/calc.py', 'import os\n\n\n' + CALC.format('+'))
        self.write('demo/tests/unit/test_calc.py', TEST_CALC.format(more=''))
        self.commit('Import what is not used')
        rows, code, out = self.run_each(5, 5)
        self.assertEqual([('failed', 1, 0, 'failed')],
                         [(row['result'], row['passed'], row['failed'],
                           row['style']) for row in rows])
        self.assertIn("F401 'os' imported but unused", out)
        self.assertEqual(1, code)
