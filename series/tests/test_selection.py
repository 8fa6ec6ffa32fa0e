"""Tests of series.selection: the tests the series selects."""

import unittest

from series import config
from series import selection
from series.tests import base


class SelectTestsTest(base.SeriesTestCase):

    FILES = {
        'demo/compute/api.py': '',
        'demo/exception.py': '',
        'demo/tests/unit/test_exception.py': '',
        'demo/tests/unit/virt/test_exception.py': '',
        'demo/tests/unit/compute/test_api.py':
            'from demo.compute import api\n',
        'demo/tests/unit/compute/test_users.py':
            'from demo.compute import api as compute_api\n',
        'demo/tests/unit/compute/test_other.py':
            'from demo import exception\n',
        'demo/tests/unit/compute/test_touched.py': '',
        'demo/tests/functional/test_api.py': '',
        'demo/tests/functional/wsgi/test_api.py': '',
        'demo/tests/functional/test_boot.py': '',
        'demo/tests/functional/samples/test_things.py':
            "class T:\n    sample_dir = 'things'\n",
        'demo/tests/functional/notify/test_events.py':
            "self._verify('thing-created')\n",
        'demo/tests/fixtures/volume.py':
            'class VolumeFixture:\n    pass\n\n\ndef helper():\n    pass\n',
        'demo/tests/unit/test_uses_fixture.py':
            'self.useFixture(fixtures.VolumeFixture(self))\n',
        'demo/tests/functional/test_servers.py':
            'self.useFixture(fixtures.VolumeFixture(self))\n',
        'demo/tests/functional/test_volumes.py':
            'VolumeFixture.VOLUME_ID\n',
        'demo/tests/functional/test_comment.py':
            '# The VolumeFixture keeps its volumes.\nvolumes = []\n',
        'demo/tests/unit/test_helper.py': 'volume.helper()\n',
    }

    def select(self, changed, **kwargs):
        for path, text in self.FILES.items():
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_text(text)
        self.project.always = ('demo.tests.unit.test_always',)
        self.project.expensive = ('demo.tests.functional.test_servers',)
        return selection.select_tests(self.project, self.root, changed,
                                      **kwargs)

    def test_source_module_selects_its_tests_and_importers(self):
        unit, functional = self.select(['demo/compute/api.py'])
        self.assertEqual(['demo.tests.unit.compute.test_api',
                          'demo.tests.unit.compute.test_users',
                          'demo.tests.unit.test_always'], unit)
        self.assertEqual(['demo.tests.functional.test_api',
                          'demo.tests.functional.wsgi.test_api'], functional)

    def test_changed_fixture_selects_its_users_but_not_expensive_ones(self):
        unit, functional = self.select(['demo/tests/fixtures/volume.py'])
        self.assertEqual(['demo.tests.unit.test_always',
                          'demo.tests.unit.test_uses_fixture'], unit)
        self.assertEqual(['demo.tests.functional.test_volumes'], functional)

    def test_expensive_module_runs_when_touched(self):
        unit, functional = self.select(
            ['demo/tests/functional/test_servers.py'])
        self.assertEqual(['demo.tests.functional.test_servers'], functional)

    def test_top_level_module_selects_the_tests_named_after_it(self):
        unit, functional = self.select(['demo/exception.py'])
        self.assertEqual(['demo.tests.unit.test_always',
                          'demo.tests.unit.test_exception',
                          'demo.tests.unit.virt.test_exception'], unit)
        self.assertEqual([], functional)

    def test_touched_tests_and_samples(self):
        unit, functional = self.select([
            'demo/tests/unit/compute/test_touched.py',
            'demo/tests/functional/test_boot.py',
            'doc/api_samples/things/v2.1/thing-resp.json',
            'doc/notification_samples/thing-created.json',
            'README.rst'])
        self.assertEqual(['demo.tests.unit.compute.test_touched',
                          'demo.tests.unit.test_always'], unit)
        self.assertEqual(['demo.tests.functional.notify.test_events',
                          'demo.tests.functional.samples.test_things',
                          'demo.tests.functional.test_boot'], functional)

    def test_narrow_selection_leaves_out_importers_users_and_names(self):
        changed = ['demo/compute/api.py', 'demo/tests/fixtures/volume.py',
                   'demo/tests/functional/test_boot.py',
                   'doc/api_samples/things/v2.1/thing-resp.json']
        wide = self.select(changed)
        narrow = self.select(changed, wide=False)
        self.assertEqual(['demo.tests.unit.compute.test_api',
                          'demo.tests.unit.compute.test_users',
                          'demo.tests.unit.test_always',
                          'demo.tests.unit.test_uses_fixture'], wide[0])
        # The mirror of the changed module, not its other importer.
        self.assertEqual(['demo.tests.unit.compute.test_api',
                          'demo.tests.unit.test_always',
                          'demo.tests.unit.test_uses_fixture'], narrow[0])
        self.assertEqual(['demo.tests.functional.samples.test_things',
                          'demo.tests.functional.test_api',
                          'demo.tests.functional.test_boot',
                          'demo.tests.functional.test_volumes',
                          'demo.tests.functional.wsgi.test_api'], wide[1])
        self.assertEqual(['demo.tests.functional.samples.test_things',
                          'demo.tests.functional.test_boot'], narrow[1])

    def test_arguments_go_to_the_suite_they_name(self):
        self.select([])
        unit, functional = selection.split_filters(self.project, self.root, [
            'demo.tests.unit.compute.test_api',
            'demo.tests.functional.test_boot', 'demo.tests.functional',
            'test_something$'])
        self.assertEqual([r'^demo\.tests\.unit\.compute\.test_api\.',
                          'test_something$'], unit)
        self.assertEqual([r'^demo\.tests\.functional\.test_boot\.',
                          r'^demo\.tests\.functional\.'], functional)


class SelectionHelpersTest(unittest.TestCase):
    """The helpers select_tests() classifies each changed file with."""

    project = config.Project(name='demo', version='1.0', sha256='0',
                             unit_tests='demo/tests/unit',
                             functional_tests='demo/tests/functional')

    def test_a_package_is_named_after_its_directory(self):
        self.assertEqual(('compute', 'api'), selection.directory_and_name(
            self.project, 'demo/compute/api.py'))
        self.assertEqual(('', 'compute'), selection.directory_and_name(
            self.project, 'demo/compute/__init__.py'))

    def test_the_test_directories(self):
        self.assertTrue(selection.in_test_directories(
            self.project, 'demo/tests/functional/test_boot.py'))
        self.assertFalse(selection.in_test_directories(
            self.project, 'demo/tests/test_boot.py'))
        without_functional = config.Project(
            name='demo', version='1.0', sha256='0',
            unit_tests='demo/tests/unit')
        self.assertFalse(selection.in_test_directories(
            without_functional, '/test_boot.py'))

    def test_the_fixtures_a_helper_module_defines(self):
        pattern = selection.fixtures_pattern(
            'class VolumeFixture:\n    pass\n\n\n'
            'class ImageFixture(VolumeFixture):\n    pass\n')
        self.assertRegex('self.useFixture(ImageFixture())', pattern)
        self.assertNotRegex('self.useFixture(ImageFixtures())', pattern)
        self.assertIsNone(selection.fixtures_pattern('def helper():\n'))

    def test_a_file_that_is_no_sample(self):
        self.assertIsNone(selection.sample_users('demo/api.json', [], None))


MODULE = """import unittest


class A(unittest.TestCase):

    def setUp(self):
        self.x = 1

    def test_a(self):
        pass

    def test_a2(self):
        pass


class B(A):
    pass


class C(unittest.TestCase):

    def test_c(self):
        pass
"""


class ChangedTestsTest(base.SeriesTestCase):

    def setUp(self):
        super().setUp()
        self.tree.mkdir(parents=True)
        (self.tree / 'test_x.py').write_text(MODULE)
        self.git('init', '-q')
        self.commit('base')
        self.git('tag', 'base')

    def changed(self, text):
        (self.tree / 'test_x.py').write_text(text)
        return selection.changed_tests(self.tree, 'test_x.py')

    def test_a_changed_test_in_its_class_and_those_deriving_from_it(self):
        self.assertEqual(['A.test_a', 'B.test_a'], self.changed(
            MODULE.replace('        pass\n', '        self.skipTest(1)\n',
                           1)))

    def test_a_new_test_method(self):
        self.assertEqual(['C.test_d'], self.changed(MODULE + (
            '\n    @unittest.skip("x")\n    def test_d(self):\n'
            '        pass\n')))

    def test_a_new_helper_method_is_no_class(self):
        self.assertEqual(['C.test_c'], self.changed(MODULE.replace(
            '    def test_c(self):\n        pass\n',
            '    def _helper(self):\n        return 1\n\n'
            '    def test_c(self):\n        self._helper()\n')))

    def test_a_changed_helper_is_the_tests_that_call_it(self):
        module = MODULE.replace(
            '    def test_c(self):\n        pass\n',
            '    def _helper(self):\n        return 1\n\n'
            '    def _indirect(self):\n        return self._helper()\n\n'
            '    def test_c(self):\n        self._indirect()\n\n'
            '    def test_e(self):\n        pass\n')
        (self.tree / 'test_x.py').write_text(module)
        self.commit('helpers')
        self.git('tag', '-f', 'base')
        self.assertEqual(['C.test_c'], self.changed(
            module.replace('return 1', 'return 2')))

    def test_a_change_outside_the_test_methods_is_the_whole_class(self):
        # The control of the two above: setUp is no test method.
        self.assertEqual(['A', 'B'], self.changed(
            MODULE.replace('self.x = 1', 'self.x = 2')))

    def test_a_mixin_runs_through_the_classes_deriving_from_it(self):
        module = MODULE + ('\n\nclass _M(object):\n\n'
                           '    def test_m(self):\n        pass\n\n\n'
                           'class M(_M, unittest.TestCase):\n    pass\n')
        (self.tree / 'test_x.py').write_text(module)
        self.commit('mixin')
        self.git('tag', '-f', 'base')
        self.assertEqual(['M.test_m'], self.changed(
            module.replace('    def test_m(self):\n        pass',
                           '    def test_m(self):\n        return')))

    def test_a_new_class_without_its_blank_lines(self):
        self.assertEqual(['D'], self.changed(
            MODULE + '\n\n# D runs C again.\nclass D(unittest.TestCase):\n'
            '    pass\n'))

    def test_a_change_outside_the_classes_is_the_whole_module(self):
        self.assertIsNone(self.changed('import os\n' + MODULE))

    def test_narrow_a_touched_own_test_module_is_its_changed_tests(self):
        # demo/x.py's own test module, which the series also touches:
        # the narrow selection runs the test it adds, the wide one all.
        for path, text in (('demo/x.py', 'X = 1\n'),
                           ('demo/tests/unit/test_x.py', MODULE)):
            (self.tree / path).parent.mkdir(parents=True, exist_ok=True)
            (self.tree / path).write_text(text)
        self.commit('base with the package')
        self.git('tag', '-f', 'base')
        (self.tree / 'demo/x.py').write_text('X = 2\n')
        (self.tree / 'demo/tests/unit/test_x.py').write_text(MODULE + (
            '\n    def test_d(self):\n        pass\n'))
        changed = selection.changed_files(self.tree)
        self.assertEqual((['demo.tests.unit.test_x'], []),
                         selection.select_tests(self.project, self.tree,
                                                changed))
        self.assertEqual((['demo.tests.unit.test_x.C.test_d'], []),
                         selection.select_tests(self.project, self.tree,
                                                changed, wide=False))

    def test_a_new_module_is_the_whole_module(self):
        (self.tree / 'test_y.py').write_text(MODULE)
        self.assertIsNone(
            selection.changed_tests(self.tree, 'test_y.py'))


class RegexForModulesTest(unittest.TestCase):

    def test_each_kind_of_entry_selects_its_tests_and_no_other(self):
        module, cls, method = selection.regex_for_modules([
            'pkg.test_x', 'pkg.test_x.C', 'pkg.test_x.C.test_a'])
        for pattern, selected, other in (
                (module, 'pkg.test_x.C.test_a', 'pkg.test_xy.C.test_a'),
                (cls, 'pkg.test_x.C.test_a', 'pkg.test_x.CD.test_a'),
                (method, 'pkg.test_x.C.test_a', 'pkg.test_x.C.test_ab'),
                (method, 'pkg.test_x.C.test_a(scenario)', 'pkg.test_x.C'),
                (method, 'pkg.test_x.C.test_a_1_True', 'pkg.test_x.C.tes')):
            self.assertRegex(selected, pattern)
            self.assertNotRegex(other, pattern)
