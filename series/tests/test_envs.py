"""Tests of series.envs: the constraints and the pip output of the venv."""

import unittest

from series import envs
from series.tests import base


class ConstraintsForTest(base.SeriesTestCase):

    def test_constraints_drop_the_project_under_test(self):
        self.assertEqual('demo-client===2.0\noslo.db===18.1.0\n',
                         envs.constraints_for(self.project))


class PipProgressTest(unittest.TestCase):

    def test_condenses_pip_output(self):
        lines = [f'Collecting package{n}==1.0\n' for n in range(1, 6)] + [
            "WARNING: Location '/nowhere' is ignored: it is not a URL\n",
            '  Downloading package5-1.0.tar.gz (10 kB)\n',
            'Building wheel for package5 (pyproject.toml): started\n',
            'Installing collected packages: package1, package2, package5\n',
            'ERROR: something went wrong\n']
        output = []
        progress = list(envs.pip_progress(lines, output, every=2))
        self.assertEqual([
            '  pip: 2 requirements resolved (package2==1.0)',
            '  pip: 4 requirements resolved (package4==1.0)',
            '  pip: building package5 from source',
            '  pip: installing 3 packages',
            '  ERROR: something went wrong'], progress)
        self.assertEqual(len(lines) - 1, len(output))
