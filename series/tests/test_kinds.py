"""Tests of series.kinds: every kind of project implements one
interface, and each has its release format.
"""

import inspect
import unittest

from series import config
from series import kinds
from series import pristine

# kinds' interface: each function's parameters (`environment` named for
# what it is by each kind: a Python project's is its virtualenv's python).
INTERFACE = {
    'environment': ['project'],
    'test': ['project'],
    'lint': ['project'],
    'typecheck': ['project'],
    'test_commit': ['project', 'environment', 'label', 'files', 'row'],
    'prepare_copy': ['project', 'environment', 'tree', 'label'],
    'run_ids': ['project', 'environment', 'tests', 'suite'],
}
# A release format's (series.pristine).
RELEASE_FORMAT = {
    'archive': ['project'],
    'fetch': ['project'],
    'unpack': ['project', 'destination'],
    'verified': ['project'],
    'describe': ['project'],
    'published_pin': ['project', 'version', 'index'],
}


def parameters(function):
    """The names of the parameters a caller passes by position, the
    environment's as the interface names it.
    """
    names = [name for name, parameter in
             inspect.signature(function).parameters.items()
             if parameter.kind in (parameter.POSITIONAL_ONLY,
                                   parameter.POSITIONAL_OR_KEYWORD)]
    return ['environment' if name == 'python' else name for name in names]


class KindsTest(unittest.TestCase):

    def test_every_kind_has_its_pin_and_its_release_format(self):
        self.assertEqual(set(config.PINS), set(kinds.KINDS))
        self.assertEqual(set(config.PINS), set(pristine.FORMATS))

    def test_every_kind_implements_the_interface(self):
        for name, kind in kinds.KINDS.items():
            for function, names in INTERFACE.items():
                with self.subTest(kind=name, function=function):
                    self.assertEqual(names,
                                     parameters(getattr(kind, function)))
            self.assertIsInstance(kind.UNSUPPORTED_VERBS, tuple)

    def test_every_release_format_implements_its_interface(self):
        for name, release in pristine.FORMATS.items():
            for function, names in RELEASE_FORMAT.items():
                with self.subTest(kind=name, function=function):
                    self.assertEqual(names,
                                     parameters(getattr(release, function)))
            self.assertTrue(release.WHAT)

    def test_a_project_gets_the_module_of_its_kind(self):
        for name in kinds.KINDS:
            project = config.Project(name='demo', version='1', kind=name,
                                     **{config.PINS[name]: 'pin'})
            self.assertIs(kinds.KINDS[name], kinds.of(project))
            self.assertIs(pristine.FORMATS[name],
                          pristine.release_format(project))


if __name__ == '__main__':
    unittest.main()
