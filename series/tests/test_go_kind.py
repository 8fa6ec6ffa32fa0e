"""Tests of series.go_kind: what a Go module has in place of a Python
project's environment and type checker, and the verbs it refuses. Its
commits' tests and style checks are tested by test_go_tests (each of a
module of the tests' own, with the real go command).
"""

import unittest
from unittest import mock

from series import config
from series import go_kind
from series import manual


class GoKindTest(unittest.TestCase):

    def test_the_go_command_is_the_environment_and_the_type_checker(self):
        self.assertIsNone(go_kind.environment(None))
        self.assertIsNone(go_kind.typecheck(None))

    def test_the_verbs_refused_are_verbs(self):
        self.assertLessEqual(set(go_kind.UNSUPPORTED_VERBS),
                             manual.known_verbs())

    def test_a_python_projects_test_options_are_refused(self):
        project = config.Project(name='gophercloud', version='v2.16.0',
                                 kind='go', h1='h1:x=')
        with mock.patch.object(go_kind.go_tests, 'test') as run:
            go_kind.test(project, filters=[], full=False, unit=True,
                         functional=True, databases=False,
                         concurrency=None)
            run.assert_called_once_with(project, background=False)
            for options in ({'filters': ['TestX']}, {'full': True},
                            {'unit': False}, {'databases': True},
                            {'concurrency': 2}):
                with self.subTest(options=options), self.assertRaisesRegex(
                        config.SeriesError, 'is a Go module'):
                    go_kind.test(project, **options)
            self.assertEqual(1, run.call_count)


if __name__ == '__main__':
    unittest.main()
