"""Tests of series.released_requirement that need no virtualenv: the
client's tests run with the library's release first on sys.path, and the
step fails when another copy is imported or a test does not pass.
"""

import os
import unittest
from unittest import mock

from series import config
from series import released_requirement
from series import suites

TEST = 'pkg.tests.test_a.T.test_refused'


class RunTest(unittest.TestCase):

    def setUp(self):
        self.project = config.Project(name='client', version='1',
                                      sha256='', unit_tests='pkg/tests')
        self.library = config.Project(name='library', version='2',
                                      sha256='', package='lib')
        self.released = config.ROOT / '.work' / 'pristine' / 'library-2'
        for target, value in (
                ('config.get_project', self.library),
                ('pristine.unpack_pristine', self.released),
                ('virtualenvs.ensure_venv', '/venv/bin/python')):
            patcher = mock.patch.object(
                getattr(released_requirement, target.split('.')[0]),
                target.split('.')[1], return_value=value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def run_with(self, location, statuses):
        def run_stestr(python, tree, filters, **kwargs):
            self.kwargs = dict(kwargs, filters=filters)
            result = suites.SuiteResult(name=kwargs['name'])
            result.results = statuses
            result.count()
            return result
        with mock.patch.object(released_requirement, 'import_location',
                               return_value=location) as where, \
                mock.patch.object(suites, 'run_stestr',
                                  side_effect=run_stestr) as stestr:
            result = released_requirement.run(self.project, 'library',
                                              [TEST])
        self.assertEqual(str(self.released),
                         where.call_args.args[2]['PYTHONPATH'])
        return result, stestr

    def test_the_release_imported_and_the_test_passed(self):
        result, _ = self.run_with(f'{self.released}/lib/__init__.py',
                                  {TEST: 'success'})
        self.assertEqual('', result.error)
        self.assertEqual(1, result.passed)
        self.assertEqual(str(self.released), self.kwargs['env']['PYTHONPATH'])
        self.assertEqual([f'^{TEST}$'], self.kwargs['filters'])
        self.assertTrue(self.kwargs['listed'])

    def test_the_patched_tree_imported_fails_before_any_test(self):
        patched = f'{config.ROOT}/.work/trees/library/lib/__init__.py'
        result, stestr = self.run_with(patched, {TEST: 'success'})
        self.assertIn(f'lib was imported from {patched}', result.error)
        stestr.assert_not_called()

    def test_a_sibling_directory_of_the_release_is_not_the_release(self):
        result, stestr = self.run_with(
            f'{self.released}-patched{os.sep}lib/__init__.py',
            {TEST: 'success'})
        self.assertIn('not from its release', result.error)
        stestr.assert_not_called()

    def test_a_skipped_test_fails(self):
        result, _ = self.run_with(f'{self.released}/lib/__init__.py',
                                  {TEST: 'skip'})
        self.assertIn(f'{TEST} skip', result.error)


if __name__ == '__main__':
    unittest.main()
