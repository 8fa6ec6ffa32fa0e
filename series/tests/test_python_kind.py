"""Tests of series.python_kind: what of a commit's files a Python
project's `each` tests, and where the mutants' tests are found. Its runs
of stestr and flake8 are tested by test_each and test_mutants.
"""

from pathlib import Path
import tempfile
import unittest
from unittest import mock

from series import python_kind
from series import selection
from series.tests import base


class MappingTest(base.SeriesTestCase):
    """Which files of a commit are test modules, of which suite."""

    def test_unit_and_functional_modules_apart(self):
        files = ['demo/tests/unit/test_core.py',
                 'demo/tests/unit/api/test_servers.py',
                 'demo/tests/functional/test_boot.py',
                 'demo/tests/unit/fixtures.py',
                 'demo/tests/unit/test_data.json',
                 'demo/core.py', 'doc/test_conf.py', 'test_setup.py']
        self.assertEqual(
            (['demo.tests.unit.api.test_servers',
              'demo.tests.unit.test_core'],
             ['demo.tests.functional.test_boot']),
            python_kind.test_modules_of(self.project, files))

    def test_a_functional_directory_inside_the_unit_one(self):
        self.project.unit_tests = 'demo/tests'
        self.assertEqual(
            (['demo.tests.test_core'], ['demo.tests.functional.test_boot']),
            python_kind.test_modules_of(self.project, [
                'demo/tests/test_core.py',
                'demo/tests/functional/test_boot.py']))

    def test_python_files(self):
        self.assertEqual(['demo/core.py', 'setup.py'],
                         python_kind.python_files(['demo/core.py',
                                                   'README.rst', 'setup.py',
                                                   'demo/x.json']))


class TestIdsTest(unittest.TestCase):
    """Where run_ids finds a test id's module."""

    def test_the_test_path_is_the_directory_of_the_test_module(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            (tree / 'pkg/tests/unit/compute').mkdir(parents=True)
            for name in ('pkg/tests/__init__.py',
                         'pkg/tests/unit/__init__.py',
                         'pkg/tests/unit/compute/__init__.py',
                         'pkg/tests/unit/compute/test_api.py'):
                (tree / name).write_text('')
            project = mock.Mock(tree=tree, unit_tests='pkg/tests/unit')
            self.assertEqual('pkg/tests/unit/compute', python_kind.test_path(
                project, 'pkg.tests.unit.compute.test_api.T.test_x'))
            self.assertEqual('pkg/tests/unit/compute', python_kind.test_path(
                project, 'pkg.tests.unit.compute'))
            self.assertEqual('pkg/tests/unit', python_kind.test_path(
                project, 'elsewhere.test_x'))

    def test_an_id_selects_its_test_not_a_longer_one(self):
        [pattern] = selection.regex_for_modules(['a.T.test_x'])
        self.assertRegex('a.T.test_x', pattern)
        self.assertRegex('a.T.test_x(scenario)', pattern)
        self.assertNotRegex('a.T.test_x_more', pattern)
        self.assertNotRegex('aXT.test_x', pattern)
