"""Tests of series.suites: the summary table and mypy."""

import contextlib
import io
from pathlib import Path
import tempfile
import unittest
from unittest import mock

from series import config
from series import process
from series import suites


class ToolSelfTestTest(unittest.TestCase):

    def test_counts_come_from_unittest_totals(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'tests').mkdir()
            (Path(tmp) / 'tests' / 'test_sample.py').write_text(
                'import sys, unittest\n\n\n'
                'class T(unittest.TestCase):\n'
                '    def test_prints(self):\n'
                '        sys.stderr.write("no newline")\n\n'
                '    def test_fails(self):\n'
                '        self.fail()\n\n'
                '    @unittest.skip("why")\n'
                '    def test_skipped(self):\n'
                '        pass\n')
            with mock.patch.object(config, 'ROOT', Path(tmp)), \
                    contextlib.redirect_stdout(io.StringIO()):
                result = suites.tool_self_test('tests', 'sample',
                                               top_level=None)
        self.assertEqual((1, 1, 1),
                         (result.passed, result.failed, result.skipped))


class SummaryTest(unittest.TestCase):

    def test_last_line_is_the_totals(self):
        out = io.StringIO()
        results = [suites.SuiteResult('a', passed=3, failed=1, skipped=2),
                   suites.SuiteResult('b', passed=4)]
        with contextlib.redirect_stdout(out):
            code = suites.print_summary(results, started=0)
        self.assertEqual(1, code)
        self.assertEqual('7 passed, 1 failed', out.getvalue().splitlines()[-1])

    def test_long_names_keep_the_columns(self):
        out = io.StringIO()
        results = [suites.SuiteResult('a', passed=1),
                   suites.SuiteResult('python-openstackclient series check',
                                      passed=1)]
        with contextlib.redirect_stdout(out):
            suites.print_summary(results, started=0)
        rows = out.getvalue().splitlines()[1:4]
        self.assertEqual(len(rows[0]), len(rows[1]))
        self.assertEqual(len(rows[0]), len(rows[2]))


class TypecheckTestCase(unittest.TestCase):

    def test_nova_is_type_checked_as_its_tox_does(self):
        nova = config.load_projects()['nova']
        self.assertIn('mypy', nova.type_check_packages)
        self.assertIsInstance(nova.type_check_packages, tuple)

    def test_project_without_type_check_packages_is_skipped(self):
        project = config.Project(name='cinder', version='29.0.0', sha256='0')
        with mock.patch.object(process, 'run') as run:
            result = suites.typecheck(project)
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

        with mock.patch.object(suites.envs, 'ensure_venv',
                               return_value=python), \
                mock.patch.object(suites.selection, 'changed_files',
                                  return_value=['a.py', 'notes.yaml',
                                                'b.py']), \
                mock.patch.object(Path, 'exists', lambda path: True), \
                mock.patch.object(process, 'run', side_effect=run), \
                contextlib.redirect_stdout(io.StringIO()):
            result = suites.lint(project)
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


class SubunitResultsTest(unittest.TestCase):

    def test_ids_with_tags_holding_commas(self):
        with tempfile.TemporaryDirectory() as tmp:
            bin_dir = Path(tmp)
            (bin_dir / 'python').write_text('#!/bin/sh\n')
            # What subunit2csv prints for tempest: quoted ids whose tags
            # hold commas.
            (bin_dir / 'subunit2csv').write_text(
                '#!/bin/sh\ncat <<EOF\n'
                'test,status,start_time,stop_time\n'
                '"tempest.a.T.test_x[id-1,negative]",success,1,2\n'
                '"tempest.a.T.test_y[id-2,multiattach]",skip,1,2\n'
                'nova.tests.T.test_z,fail,1,2\n'
                'nova.tests.T.test_w,exists,,\n'
                'EOF\n')
            for script in ('python', 'subunit2csv'):
                (bin_dir / script).chmod(0o755)
            results = suites.read_subunit_results(bin_dir / 'python', tmp)
        self.assertEqual({'tempest.a.T.test_x': 'success',
                          'tempest.a.T.test_y': 'skip',
                          'nova.tests.T.test_z': 'fail'}, results)
