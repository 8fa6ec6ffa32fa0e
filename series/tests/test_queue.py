"""Tests of series.queue: apply, export, the series file, status."""

import os
import re
import subprocess
from unittest import mock

from series import config
from series import queue
from series.tests import base


class ApplyExportTest(base.SeriesTestCase):

    def test_apply_builds_base_plus_one_commit_per_patch(self):
        self.make_series()
        self.quiet(queue.apply, self.project)
        log = self.git('log', '--format=%s', 'base..HEAD').splitlines()
        self.assertEqual(['Spell out line thirty and add a module',
                          'Spell out line ten'], log)
        self.assertEqual('demo 1.0', self.git('log', '-1', '--format=%s',
                                              'base').strip())
        self.assertIn('line thirty', (self.tree / 'demo/core.py').read_text())
        self.assertTrue((self.tree / 'demo/new.py').exists())

    def test_ensure_tree_applies_only_where_there_is_none(self):
        self.assertEqual(self.tree, self.quiet(queue.ensure_tree,
                                               self.project))
        self.assertTrue((self.tree / '.git').exists())
        marker = self.tree / 'work-in-progress'
        marker.write_text('')
        self.quiet(queue.ensure_tree, self.project)
        self.assertTrue(marker.exists())

    def test_base_commit_is_the_same_on_every_apply(self):
        self.quiet(queue.apply, self.project)
        first = self.git('rev-parse', 'base')
        self.quiet(queue.apply, self.project)
        self.assertEqual(first, self.git('rev-parse', 'base'))

    def test_base_holds_every_file_of_the_tarball(self):
        self.quiet(queue.apply, self.project)
        files = self.git('ls-tree', '-r', '--name-only', 'base').split()
        self.assertEqual(sorted(['PKG-INFO', 'backend.py', 'demo/__init__.py',
                                 'demo/core.py', 'pyproject.toml']),
                         sorted(files))

    def test_export_writes_series_and_format_patch_files(self):
        self.make_series()
        self.assertEqual(
            ['0001-Spell-out-line-ten.patch',
             '0002-Spell-out-line-thirty-and-add-a-module.patch'],
            queue.read_series(self.project))
        text = (self.project.patches /
                '0001-Spell-out-line-ten.patch').read_text()
        self.assertTrue(text.startswith('From ' + '0' * 40))
        self.assertIn('Subject: [PATCH] Spell out line ten\n', text)
        self.assertNotRegex(text, r'\n-- \n\d')  # no git version signature

    def test_apply_then_export_changes_no_byte(self):
        self.make_series()
        before = self.patch_bytes()
        self.quiet(queue.apply, self.project)
        self.quiet(queue.export, self.project)
        self.assertEqual(before, self.patch_bytes())

    def test_a_bracketed_subject_prefix_survives_apply_and_export(self):
        self.make_series()
        self.edit('demo/core.py', 'line 20\n', 'line twenty\n')
        self.commit('[demo] Spell out line twenty')
        self.quiet(queue.export, self.project)
        before = self.patch_bytes()
        self.quiet(queue.apply, self.project)
        self.assertEqual('[demo] Spell out line twenty',
                         self.git('log', '-1', '--format=%s').strip())
        self.quiet(queue.export, self.project)
        self.assertEqual(before, self.patch_bytes())

    def test_export_ignores_user_git_configuration(self):
        self.make_series()
        before = self.patch_bytes()
        user_config = self.root / 'gitconfig'
        user_config.write_text(
            '[format]\n\tsignature = my sig\n\tnumbered = true'
            '\n[diff]\n\tnoprefix = true\n\tcontext = 7\n')
        with mock.patch.dict(os.environ,
                             {'GIT_CONFIG_GLOBAL': str(user_config)}):
            self.quiet(queue.export, self.project)
        self.assertEqual(before, self.patch_bytes())

    def test_export_removes_patches_of_dropped_commits(self):
        self.make_series()
        self.git('reset', '-q', '--hard', 'HEAD~1')
        self.quiet(queue.export, self.project)
        self.assertEqual(['0001-Spell-out-line-ten.patch', 'series'],
                         sorted(self.patch_bytes()))

    def test_export_refuses_uncommitted_edits(self):
        self.make_series()
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        with self.assertRaisesRegex(config.SeriesError, 'demo/core.py'):
            self.quiet(queue.export, self.project)

    def test_apply_refuses_unexported_work_and_names_it(self):
        self.make_series()
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        self.commit('Spell out line five')
        (self.tree / 'demo' / 'core.py').write_text('edited\n')
        with self.assertRaises(config.SeriesError) as raised:
            self.quiet(queue.apply, self.project)
        self.assertIn('"Spell out line five" is not exported',
                      str(raised.exception))
        self.assertIn('demo/core.py', str(raised.exception))
        self.quiet(queue.apply, self.project, force=True)
        self.assertEqual([], self.problems())

    def test_refusal_advice_can_be_followed_as_written(self):
        self.make_series()
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        with self.assertRaises(config.SeriesError) as raised:
            self.quiet(queue.apply, self.project, alternative='\nor else')
        message = str(raised.exception)
        self.assertIn(f'commit the edits (git -C {self.tree} add -A && git '
                      f'-C {self.tree} commit), then export the commits '
                      '(tools/series export demo)', message)
        self.assertTrue(message.endswith(
            '\nor else\nor discard it: the same command with --force'))
        # Followed: commit, export, and the tree applies again.
        self.commit('Spell out line five')
        self.quiet(queue.export, self.project)
        self.quiet(queue.apply, self.project)
        # Commits alone only need exporting.
        self.edit('demo/core.py', 'line 6\n', 'line six\n')
        self.commit('Spell out line six')
        with self.assertRaises(config.SeriesError) as raised:
            self.quiet(queue.apply, self.project)
        self.assertIn('to keep it: export the commits (tools/series export '
                      'demo)', str(raised.exception))

    def test_change_id_from_hook_survives_reexport(self):
        self.quiet(queue.apply, self.project)
        self.edit('demo/core.py', 'line 2\n', 'line two\n')
        self.git('add', '-A')
        message = base.MESSAGE.format(subject='Spell out line two')
        subprocess.run(['git', 'commit', '-q', '-m', message], cwd=self.tree,
                       check=True, env=dict(os.environ, **base.AUTHOR))
        body = self.git('log', '-1', '--format=%B')
        change_ids = re.findall(r'^Change-Id: I[0-9a-f]{40}$', body, re.M)
        self.assertEqual(1, len(change_ids))
        self.quiet(queue.export, self.project)
        before = self.patch_bytes()
        self.quiet(queue.apply, self.project)
        self.git('commit', '-q', '--amend', '--no-edit')  # hook runs again
        self.quiet(queue.export, self.project)
        self.assertEqual(before, self.patch_bytes())
        self.assertIn(change_ids[0], self.git('log', '-1', '--format=%B'))

    def test_apply_refuses_a_tree_in_use_even_with_force(self):
        self.make_series()
        head = self.git('rev-parse', 'HEAD')
        queue.mark_in_use(self.project, 'the real cloud')
        for force in (False, True):
            with self.assertRaisesRegex(config.SeriesError,
                                        'the real cloud runs from the work'):
                self.quiet(queue.apply, self.project, force=force)
        # Untouched: the same commit, still marked.
        self.assertEqual(head, self.git('rev-parse', 'HEAD'))
        self.assertEqual('the real cloud', queue.in_use(self.project))
        queue.unmark_in_use(self.project)
        queue.unmark_in_use(self.project)
        self.quiet(queue.apply, self.project)
        self.assertIsNone(queue.in_use(self.project))

    def test_apply_refuses_series_naming_a_missing_patch(self):
        (self.project.patches / 'series').write_text('0001-gone.patch\n')
        with self.assertRaisesRegex(config.SeriesError, '0001-gone.patch'):
            self.quiet(queue.apply, self.project)


class SeriesFileTest(base.SeriesTestCase):

    def test_series_file_comments_and_options(self):
        (self.project.patches / 'series').write_text(
            '# comment\n\n0001-a.patch\n0002-b.patch -p1 # trailing\n')
        self.assertEqual(['0001-a.patch', '0002-b.patch'],
                         queue.read_series(self.project))
        (self.project.patches / 'series').write_text('0001-a.patch -p0\n')
        with self.assertRaisesRegex(config.SeriesError, 'only -p1'):
            queue.read_series(self.project)

    def test_rpm_patch_lines(self):
        self.make_series()
        self.assertEqual(
            ['Patch0001: 0001-Spell-out-line-ten.patch',
             'Patch0002: 0002-Spell-out-line-thirty-and-add-a-module.patch'],
            queue.rpm_patch_lines(self.project))
        # After a spec file's own Patch0001 to Patch0099.
        self.assertEqual(
            ['Patch0100: 0001-Spell-out-line-ten.patch',
             'Patch0101: 0002-Spell-out-line-thirty-and-add-a-module.patch'],
            queue.rpm_patch_lines(self.project, start=100))


class StatusTest(base.SeriesTestCase):

    def test_status_reports_sync(self):
        self.make_series()
        self.assertEqual('demo: base demo 1.0 (sdist verified), 2 patches in '
                         'series, work tree 2 commits, in sync',
                         queue.status(self.project))
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        self.assertIn('NOT in sync (1 problem;', queue.status(self.project))
