"""Tests of series.go_module with the real go command and a module
proxy in a directory: the h1 hash as the go command computes it, a
download verified against its pin, the zip unpacked.
"""

from pathlib import Path
import tempfile
import unittest

from series import config
from series import go_module
from series.tests import base
from series.tests import go_fixture


class Hash1Test(base.RootTestCase):

    def setUp(self):
        super().setUp()
        self.proxy = tempfile.TemporaryDirectory()
        self.addCleanup(self.proxy.cleanup)
        self.archive = go_fixture.serve(self, self.proxy.name)

    def test_the_hash_is_the_go_commands(self):
        info = go_module.download(go_fixture.MODULE, go_fixture.VERSION)
        self.assertTrue(info['Sum'].startswith('h1:'))
        self.assertEqual(info['Sum'], go_module.hash1(self.archive))

    def test_another_file_is_another_hash(self):
        other = Path(self.proxy.name) / 'other.zip'
        other.write_bytes(go_fixture.module_zip(
            dict(go_fixture.FILES, **{'demo.go': 'package demo\n'})))
        self.assertNotEqual(go_module.hash1(self.archive),
                            go_module.hash1(other))

    def test_an_unknown_version_is_an_error(self):
        with self.assertRaisesRegex(config.SeriesError,
                                    'go mod download example.com/demo@'
                                    'v9.9.9 failed'):
            go_module.download(go_fixture.MODULE, 'v9.9.9')


class FetchTest(base.RootTestCase):

    def setUp(self):
        super().setUp()
        proxy = tempfile.TemporaryDirectory()
        self.addCleanup(proxy.cleanup)
        self.h1 = go_module.hash1(go_fixture.serve(self, proxy.name))

    def project(self, h1):
        return config.Project(name='demo', version=go_fixture.VERSION,
                              kind='go', module=go_fixture.MODULE, h1=h1)

    def test_a_download_matching_its_pin_is_kept(self):
        project = self.project(self.h1)
        archive = go_module.fetch(project)
        self.assertEqual(go_module.archive(project), archive)
        self.assertEqual(self.h1, go_module.hash1(archive))

    def test_a_download_against_its_pin_is_refused(self):
        wrong = 'h1:' + 'A' * 43 + '='
        with self.assertRaisesRegex(config.SeriesError,
                                    'does not match the pin'):
            go_module.fetch(self.project(wrong))
        self.assertFalse(go_module.archive(self.project(wrong)).exists())

    def test_a_cached_download_with_another_hash_is_fetched_again(self):
        project = self.project(self.h1)
        archive = go_module.archive(project)
        archive.parent.mkdir(parents=True)
        archive.write_bytes(go_fixture.module_zip(
            {'go.mod': 'module example.com/demo\n'}))
        go_module.fetch(project)
        self.assertEqual(self.h1, go_module.hash1(archive))

    def test_unpacked_without_its_prefix(self):
        project = self.project(self.h1)
        destination = self.root / 'tree'
        go_module.unpack(project, destination)
        self.assertEqual(sorted(go_fixture.FILES), sorted(
            str(path.relative_to(destination))
            for path in destination.rglob('*') if path.is_file()))


class ProjectTest(base.RootTestCase):

    def test_a_go_project_is_pinned_by_its_h1(self):
        project = config.Project(name='demo', version='v1.0.0', kind='go',
                                 module='example.com/demo', h1='h1:x=')
        self.assertEqual('h1:x=', project.digest)
        self.assertEqual('demo-v1.0.0.zip', go_module.archive(project).name)

    def test_a_project_without_its_pin_or_of_another_kind(self):
        for entry, error in (
                ('kind = "go"\nmodule = "example.com/demo"', 'pins no h1'),
                ('', 'pins no sha256'),
                ('sha256 = "x"\nkind = "rust"', "kind 'rust'")):
            (self.root / 'projects.toml').write_text(
                f'[demo]\nversion = "1.0"\n{entry}\n')
            with self.assertRaisesRegex(config.SeriesError, error):
                config.load_projects()


if __name__ == '__main__':
    unittest.main()
