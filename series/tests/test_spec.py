"""Tests of series.spec: the spec's checks as CI counts them."""

import subprocess
import sys
from unittest import mock

from series import process
from series import spec
from series import suites
from series.tests import base
from series import virtualenvs


class SpecChecksTest(base.SeriesTestCase):

    def checks(self, sphinx_exit):
        sphinx = subprocess.CompletedProcess([], sphinx_exit,
                                             stdout='WARNING: bad title')
        titles = suites.SuiteResult('spec title check', passed=19)
        with mock.patch.object(virtualenvs, 'ensure_venv',
                               return_value=sys.executable), \
                mock.patch.object(suites, 'tool_self_test',
                                  return_value=titles) as self_test, \
                mock.patch.object(process, 'run',
                                  return_value=sphinx) as run:
            results = self.quiet(spec.spec_checks, self.project)
        self_test.assert_called_once_with('specs/tests', 'spec title check',
                                          python=sys.executable)
        self.assertIn('-W', run.call_args.args[0])
        return results

    def test_clean_build(self):
        titles, sphinx = self.checks(0)
        self.assertEqual((19, 1, 0), (titles.passed, sphinx.passed,
                                      sphinx.failed))

    def test_a_warning_fails_the_build(self):
        _, sphinx = self.checks(1)
        self.assertEqual((0, 1), (sphinx.passed, sphinx.failed))
        self.assertIn('bad title', sphinx.error)
