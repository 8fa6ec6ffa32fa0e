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
