"""Tests of series.pristine: the pinned base of each kind of project,
unpacked and committed.
"""

import tempfile
from unittest import mock

from series import config
from series import go_module
from series import pristine
from series import process
from series import sdist
from series.tests import base
from series.tests import go_fixture


class PythonBaseTest(base.SeriesTestCase):

    def test_the_sdist_unpacked_and_committed_with_its_pin(self):
        tree = self.root / 'tree'
        self.quiet(pristine.init_base_repo, self.project, tree)
        self.assertTrue(pristine.verified(self.project))
        self.assertEqual(base.CORE, (tree / 'demo' / 'core.py').read_text())
        self.assertIn(f'The pristine release sdist, sha256 '
                      f'{self.project.sha256}.',
                      process.git('log', '-1', '--format=%B', 'base',
                                  cwd=tree).stdout)

    def test_a_release_not_downloaded_is_not_verified(self):
        sdist.archive(self.project).unlink()
        self.assertIsNone(pristine.verified(self.project))


class GoBaseTest(base.RootTestCase):

    def setUp(self):
        super().setUp()
        proxy = tempfile.TemporaryDirectory()
        self.addCleanup(proxy.cleanup)
        self.zip = go_fixture.serve(self, proxy.name)
        self.project = config.Project(
            name='demo', version=go_fixture.VERSION, kind='go',
            module=go_fixture.MODULE, h1=go_module.hash1(self.zip))

    def test_the_module_unpacked_and_committed_with_its_pin(self):
        self.assertIsNone(pristine.verified(self.project))
        tree = self.root / 'tree'
        with mock.patch.object(process, 'say'):
            pristine.init_base_repo(self.project, tree)
        self.assertTrue(pristine.verified(self.project))
        self.assertEqual(go_fixture.FILES['demo.go'],
                         (tree / 'demo.go').read_text())
        self.assertIn(f'The pristine release module zip of '
                      f'{go_fixture.MODULE}, {self.project.h1}.',
                      process.git('log', '-1', '--format=%B', 'base',
                                  cwd=tree).stdout)

    def test_a_download_against_its_pin_is_not_verified(self):
        with mock.patch.object(process, 'say'):
            pristine.fetch_base(self.project)
        go_module.archive(self.project).write_bytes(
            go_fixture.module_zip({'go.mod': 'module example.com/demo\n'}))
        self.assertFalse(pristine.verified(self.project))
