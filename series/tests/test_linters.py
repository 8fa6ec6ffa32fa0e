"""Tests of series.linters: flake8 and the project's lint commands on the
changed files, and mypy.
"""

import contextlib
import io
from pathlib import Path
import unittest
from unittest import mock

from series import config
from series import linters
from series import process


class TypecheckTestCase(unittest.TestCase):

    def test_nova_is_type_checked_as_its_tox_does(self):
        nova = config.load_projects()['nova']
        self.assertIn('mypy', nova.type_check_packages)
        self.assertIsInstance(nova.type_check_packages, tuple)

    def test_project_without_type_check_packages_is_skipped(self):
        project = config.Project(name='cinder', version='29.0.0', sha256='0')
        with mock.patch.object(process, 'run') as run:
            result = linters.typecheck(project)
        run.assert_not_called()
        self.assertEqual((0, 0), (result.passed, result.failed))


class LintTest(unittest.TestCase):
    """flake8, then the project's lint-commands, on the changed files."""

    def lint(self, lint_commands, failing=()):
        project = config.Project(name='demo', version='1.0', sha256='0',
                                 lint_commands=lint_commands)
        python = Path('/venv/bin/python')
        calls = []

        def run(argv, cwd, check):
            calls.append([str(part) for part in argv])
            failed = Path(argv[0]).name in failing
            return mock.Mock(returncode=int(failed),
                             stdout='problem\n' if failed else '')

        with mock.patch.object(linters.virtualenvs, 'ensure_venv',
                               return_value=python), \
                mock.patch.object(linters.selection, 'changed_files',
                                  return_value=['a.py', 'notes.yaml',
                                                'b.py']), \
                mock.patch.object(Path, 'exists', lambda path: True), \
                mock.patch.object(process, 'run', side_effect=run), \
                contextlib.redirect_stdout(io.StringIO()):
            result = linters.lint(project)
        return result, calls

    def test_commands_run_on_the_changed_python_files(self):
        result, calls = self.lint((('ruff', 'check', '{files}'),
                                   ('check-uuid',)))
        self.assertEqual([['/venv/bin/flake8', 'a.py', 'b.py'],
                          ['/venv/bin/ruff', 'check', 'a.py', 'b.py'],
                          ['/venv/bin/check-uuid']], calls)
        self.assertEqual((1, 0), (result.passed, result.failed))

    def test_named_after_its_tools(self):
        result, _ = self.lint((('ruff', 'check', '{files}'),
                               ('ruff', 'format', '--check', '{files}'),
                               ('check-uuid',)))
        self.assertEqual('demo flake8, ruff, check-uuid', result.name)

    def test_any_failing_command_fails_the_lint(self):
        result, calls = self.lint((('ruff', 'check', '{files}'),
                                   ('check-uuid',)), failing=('ruff',))
        self.assertEqual(3, len(calls))
        self.assertEqual((0, 1), (result.passed, result.failed))
        self.assertIn('ruff check:\nproblem', result.error)


class LintToolsTest(unittest.TestCase):
    """flake8 on this repository's own Python."""

    def lint_tools(self, returncode, stdout):
        with mock.patch.object(linters.virtualenvs, 'ensure_venv',
                               return_value=Path('/venv/bin/python')), \
                mock.patch.object(process, 'run', return_value=mock.Mock(
                    returncode=returncode, stdout=stdout)) as run, \
                contextlib.redirect_stdout(io.StringIO()):
            result = linters.lint_tools(config.Project(
                name='nova', version='1.0', sha256='0'))
        return result, run.call_args

    def test_flake8_runs_on_the_repository_from_its_root(self):
        result, call = self.lint_tools(0, '')
        self.assertEqual(['/venv/bin/python', '-m', 'flake8', 'tools/series',
                          'series'], [str(arg) for arg in call.args[0][:5]])
        self.assertEqual(config.ROOT, call.kwargs['cwd'])
        self.assertEqual(('tools flake8', 1, 0),
                         (result.name, result.passed, result.failed))

    def test_a_problem_fails_with_flake8s_output(self):
        result, _ = self.lint_tools(1, 'series/x.py:1:1: F401\n')
        self.assertEqual((0, 1), (result.passed, result.failed))
        self.assertEqual('series/x.py:1:1: F401', result.error)
