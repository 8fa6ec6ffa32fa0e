"""Tests of series.test_ids: each test's status as stestr names it, a
name that does not import apart, and what the tests print kept off the
JSON line.
"""

import json
from pathlib import Path
import subprocess
import sys
import tempfile
import unittest

SAMPLE = '''\
import unittest


class T(unittest.TestCase):

    def test_ok(self):
        print('noise')

    def test_fails(self):
        self.fail()

    def test_errors(self):
        raise RuntimeError

    def test_a_subtest_fails(self):
        for n in (1, 2):
            with self.subTest(n=n):
                self.assertEqual(1, n)

    @unittest.skip('why')
    def test_skips(self):
        pass

    @unittest.expectedFailure
    def test_expected(self):
        self.fail()

    @unittest.expectedFailure
    def test_unexpected(self):
        pass


class Fixture(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        raise RuntimeError

    def test_never(self):
        pass
'''


class TestIdsTest(unittest.TestCase):

    def test_statuses(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'sample_tests.py').write_text(SAMPLE)
            proc = subprocess.run(
                [sys.executable, '-m', 'series.test_ids', 'sample_tests.T',
                 'sample_tests.Fixture', 'sample_tests.Nope'],
                cwd=tmp, capture_output=True, text=True,
                env={'PYTHONPATH': str(Path(__file__).parents[2])})
        run = json.loads(proc.stdout)
        self.assertEqual({
            'sample_tests.T.test_ok': 'success',
            'sample_tests.T.test_fails': 'fail',
            'sample_tests.T.test_errors': 'fail',
            'sample_tests.T.test_a_subtest_fails': 'fail',
            'sample_tests.T.test_skips': 'skip',
            'sample_tests.T.test_expected': 'xfail',
            'sample_tests.T.test_unexpected': 'fail',
            'setUpClass (sample_tests.Fixture)': 'fail'}, run['results'])
        self.assertEqual(['Nope'], run['unloaded'])
        self.assertTrue(run['imported'].endswith('series/test_ids.py'))
