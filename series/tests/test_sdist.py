"""Tests of series.sdist: a Python release fetched and verified."""

from unittest import mock

from series import config
from series import sdist
# series/tests/base.py, the tests' shared fixture.
from series.tests import base as fixture


class BaseTest(fixture.SeriesTestCase):

    def test_fetch_downloads_and_verifies(self):
        sdist.archive(self.project).unlink()
        path = self.quiet(sdist.fetch, self.project)
        self.assertEqual(self.project.sha256, fixture.sha256(path))

    def test_fetch_replaces_a_corrupt_cached_download(self):
        sdist.archive(self.project).write_bytes(b'not the sdist')
        path = self.quiet(sdist.fetch, self.project)
        self.assertEqual(self.project.sha256, fixture.sha256(path))

    def test_fetch_refuses_a_download_with_another_sha256(self):
        sdist.archive(self.project).unlink()
        fixture.make_sdist(self.index, core='tampered\n')
        with self.assertRaisesRegex(config.SeriesError,
                                    'does not match the pin'):
            self.quiet(sdist.fetch, self.project)
        self.assertFalse(sdist.archive(self.project).exists())

    def test_constraints_missing_refused_before_downloading(self):
        sdist.archive(self.project).unlink()
        (self.root / 'constraints' / 'upper-constraints.txt').unlink()
        with self.assertRaisesRegex(
                config.SeriesError,
                'constraints/upper-constraints.txt .* is not in the '
                'repository'):
            self.quiet(sdist.fetch, self.project)
        self.assertFalse(sdist.archive(self.project).exists())

    def test_the_repository_pins_its_own_constraints(self):
        # Nothing outside the repository: every project names a file of it.
        with mock.patch.object(config, 'ROOT', fixture.REPOSITORY):
            for project in config.load_projects().values():
                if project.kind == 'go':
                    # Its dependencies are pinned by its own go.sum.
                    continue
                self.assertTrue(project.constraints_file.is_relative_to(
                    fixture.REPOSITORY))
                sdist.check_constraints(project)
