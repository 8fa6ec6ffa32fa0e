"""Tests of series.virtualenvs: the constraints and the pip output of the
venv.
"""

import dataclasses
import unittest

from series import config
from series.tests import base
from series import virtualenvs


class ConstraintsForTest(base.SeriesTestCase):

    def test_constraints_drop_the_project_under_test(self):
        self.assertEqual('demo-client===2.0\noslo.db===18.1.0\n',
                         virtualenvs.constraints_for(self.project))

    def test_constraints_drop_the_series_requirements(self):
        # The client takes the patched demo: neither pin may hold it back.
        client = dataclasses.replace(self.project, name='demo-client',
                                     series_requirements=('demo',))
        self.assertEqual('oslo.db===18.1.0\n',
                         virtualenvs.constraints_for(client))

    def test_series_requirements_are_applied_first(self):
        client = dataclasses.replace(self.project, name='demo-client',
                                     series_requirements=('demo',))
        self.assertFalse((self.tree / '.git').exists())
        required = self.quiet(virtualenvs.series_requirements, client)
        self.assertEqual(['demo'], [project.name for project in required])
        self.assertTrue((self.tree / '.git').exists())

    def test_unknown_series_requirement(self):
        client = dataclasses.replace(self.project, name='demo-client',
                                     series_requirements=('nowhere',))
        self.assertRaises(config.SeriesError, virtualenvs.series_requirements,
                          client)


class TestRequirementsTest(base.SeriesTestCase):

    def test_test_requirements_file(self):
        self.tree.mkdir(parents=True)
        (self.tree / 'test-requirements.txt').write_text('stestr\n')
        (self.tree / 'pyproject.toml').write_text(
            '[dependency-groups]\ntest = ["ignored"]\n')
        self.assertEqual(['-r', self.tree / 'test-requirements.txt'],
                         virtualenvs.test_requirements(self.tree))

    def test_dependency_group(self):
        # PEP 735, as openstacksdk has it; an included group is no
        # requirement string.
        self.tree.mkdir(parents=True)
        (self.tree / 'pyproject.toml').write_text(
            '[dependency-groups]\n'
            'test = ["stestr>=1.0.0", {include-group = "typing"}]\n'
            'typing = ["mypy"]\n')
        self.assertEqual(['stestr>=1.0.0'],
                         virtualenvs.test_requirements(self.tree))

    def test_neither(self):
        self.tree.mkdir(parents=True)
        (self.tree / 'pyproject.toml').write_text('[project]\nname = "x"\n')
        self.assertRaises(config.SeriesError, virtualenvs.test_requirements,
                          self.tree)


class InstallProgressTest(unittest.TestCase):

    def test_condenses_uv_output(self):
        lines = ['Resolved 3 packages in 1.20s\n',
                 '   Building package5==1.0\n',
                 '      Built package5==1.0\n',
                 'Prepared 3 packages in 2.01s\n',
                 'Installed 3 packages in 15ms\n',
                 ' + package1==1.0\n', ' + package2==1.0\n',
                 ' + package5==1.0\n',
                 'error: something went wrong\n']
        output = []
        progress = list(virtualenvs.install_progress(lines, output))
        self.assertEqual([
            '  uv: Resolved 3 packages in 1.20s',
            '  uv: Prepared 3 packages in 2.01s',
            '  uv: Installed 3 packages in 15ms',
            '  uv: error: something went wrong'], progress)
        self.assertEqual(lines, output)
