"""Tests of series.patched_docs: the release notes repository."""

import subprocess

from series import patched_docs
from series import queue
from series.tests import base


class ReleaseNotesRepoTest(base.SeriesTestCase):

    def test_holds_the_series_notes_and_the_current_series_page(self):
        self.quiet(queue.apply, self.project)
        source = self.tree / 'releasenotes' / 'source'
        (source / '_static').mkdir(parents=True)
        (source / '_static' / '.placeholder').write_text('')
        (source / 'conf.py').write_text("extensions = ['reno.sphinxext']\n")
        (source / 'unreleased.rst').write_text(
            'Current Series\n==============\n\n.. release-notes::\n')
        (source / '2025.1.rst').write_text(
            '.. release-notes::\n   :branch: stable/2025.1\n')
        notes = self.tree / 'releasenotes' / 'notes'
        notes.mkdir()
        (notes / 'feature-0123456789abcdef.yaml').write_text(
            'features:\n  - A feature.\n')
        self.commit('Add a feature with its release note')

        repo = patched_docs.release_notes_repo(self.project,
                                               'releasenotes/source')

        files = subprocess.run(['git', 'ls-files'], cwd=repo, check=True,
                               capture_output=True, text=True).stdout
        self.assertEqual(['releasenotes/notes/feature-0123456789abcdef.yaml',
                          'releasenotes/source/_static/.placeholder',
                          'releasenotes/source/conf.py',
                          'releasenotes/source/index.rst'],
                         files.split())
        self.assertEqual((source / 'unreleased.rst').read_text(),
                         (repo / source.relative_to(self.tree) /
                          'index.rst').read_text())
