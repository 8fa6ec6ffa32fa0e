"""Tests of series.checks: the series check and the commit-message rules."""

import shutil
import unittest
from unittest import mock

from series import checks
from series import config
from series import queue
from series.tests import base


class CheckTest(base.SeriesTestCase):

    def test_clean_series_passes(self):
        self.make_series()
        self.assertEqual([], self.problems())

    def test_clean_without_work_tree(self):
        self.make_series()
        shutil.rmtree(self.tree)
        self.assertEqual([], self.problems())

    def test_names_unexported_commit(self):
        self.make_series()
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        self.commit('Spell out line five')
        problems = self.problems()
        self.assertEqual(1, len(problems), problems)
        self.assertRegex(problems[0], r'commit [0-9a-f]{12} "Spell out line '
                         r'five" is not exported \(patches/demo/0003-Spell-'
                         r'out-line-five.patch missing\)')

    def test_names_amended_commit(self):
        self.make_series()
        self.edit('demo/core.py', 'line thirty\n', 'line 30 again\n')
        self.git('commit', '-q', '-a', '--amend', '--no-edit')
        problems = self.problems()
        self.assertEqual(1, len(problems), problems)
        self.assertIn('"Spell out line thirty and add a module" is not '
                      'exported', problems[0])
        self.assertIn('differs', problems[0])

    def test_names_uncommitted_edit(self):
        self.make_series()
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        self.assertEqual(['uncommitted edit in work tree:  M demo/core.py'],
                         self.problems())

    def test_names_untracked_file(self):
        self.make_series()
        (self.tree / 'demo' / 'forgotten.py').write_text('')
        self.assertEqual(['uncommitted edit in work tree: ?? '
                          'demo/forgotten.py'], self.problems())

    def test_test_output_is_not_an_edit(self):
        self.make_series()
        (self.tree / '.stestr').mkdir()
        (self.tree / '.stestr' / '0').write_text('')
        (self.tree / 'demo' / '__pycache__').mkdir()
        (self.tree / 'demo' / '__pycache__' / 'core.pyc').write_text('')
        # The docs build writes sample files next to the sources.
        (self.tree / 'doc' / 'source' / '_static').mkdir(parents=True)
        (self.tree / 'doc' / 'source' / '_static' /
         'demo.conf.sample').write_text('')
        self.assertEqual([], self.problems())

    def test_names_commit_dropped_from_work_tree(self):
        self.make_series()
        self.git('reset', '-q', '--hard', 'HEAD~1')
        problems = self.problems()
        self.assertIn('patches/demo/0002-Spell-out-line-thirty-and-add-a-'
                      'module.patch is in series but no work tree commit '
                      'gives it', problems)

    def test_names_patch_missing_from_series(self):
        self.make_series()
        series_file = self.project.patches / 'series'
        lines = series_file.read_text().splitlines()
        series_file.write_text('\n'.join(lines[:-1]) + '\n')
        problems = self.problems()
        self.assertIn('0002-Spell-out-line-thirty-and-add-a-module.patch is '
                      'not listed in series', problems)

    def test_names_series_entry_without_file(self):
        self.make_series()
        (self.project.patches / '0001-Spell-out-line-ten.patch').unlink()
        problems = self.problems()
        self.assertIn('series lists 0001-Spell-out-line-ten.patch, which does '
                      'not exist', problems)

    def test_names_patch_that_applies_only_with_fuzz(self):
        self.make_series()
        shutil.rmtree(self.tree)
        path = self.project.patches / '0001-Spell-out-line-ten.patch'
        text = path.read_text()
        self.assertIn('\n line 7\n', text)
        path.write_text(text.replace('\n line 7\n', '\n line seven\n'))
        problems = self.problems()
        self.assertTrue(any(
            p.startswith('0001-Spell-out-line-ten.patch does not apply '
                         'cleanly with patch -p1') and 'fuzz' in p
            for p in problems), problems)
        self.assertTrue(any('0001-Spell-out-line-ten.patch does not apply '
                            'with git am' in p for p in problems), problems)

    def test_names_patch_that_applies_only_at_an_offset(self):
        self.make_series()
        shutil.rmtree(self.tree)
        path = self.project.patches / '0001-Spell-out-line-ten.patch'
        text = path.read_text()
        self.assertIn('@@ -7,7 +7,7 @@', text)
        path.write_text(text.replace('@@ -7,7 +7,7 @@', '@@ -4,7 +4,7 @@'))
        problems = self.problems()
        self.assertTrue(any('cleanly with patch -p1' in p and 'offset' in p
                            for p in problems), problems)

    @unittest.skipUnless(shutil.which('quilt'), 'quilt is not installed '
                         '(tools/setup-test-host installs it for CI)')
    def test_quilt_applies_the_series(self):
        self.make_series()
        self.assertEqual([], self.quiet(checks.check, self.project,
                                        quilt=True))

    @unittest.skipUnless(shutil.which('quilt'), 'quilt is not installed '
                         '(tools/setup-test-host installs it for CI)')
    def test_quilt_names_patch_at_an_offset(self):
        self.make_series()
        shutil.rmtree(self.tree)
        path = self.project.patches / '0001-Spell-out-line-ten.patch'
        text = path.read_text()
        path.write_text(text.replace('@@ -7,7 +7,7 @@', '@@ -4,7 +4,7 @@'))
        problems = self.quiet(checks.check, self.project, quilt=True)
        self.assertTrue(any(p.startswith('quilt push -a does not apply') and
                            'offset' in p for p in problems), problems)

    def test_quilt_required_when_asked_for(self):
        self.make_series()
        with mock.patch.object(checks.shutil, 'which', return_value=None):
            problems = self.quiet(checks.check, self.project, quilt=True)
        self.assertIn('quilt is not installed (tools/setup-test-host '
                      'installs it)', problems)

    def test_names_message_without_trailers(self):
        self.quiet(queue.apply, self.project)
        self.edit('demo/core.py', 'line 3\n', 'line three\n')
        self.commit('Spell out line three', '{subject}\n\nWhy.\n',
                    '--no-verify')  # without the Change-Id hook
        self.quiet(queue.export, self.project)
        problems = self.problems()
        name = '0001-Spell-out-line-three.patch'
        self.assertIn(f'{name}: needs exactly one Change-Id: I<40 hex> '
                      'trailer, has 0', problems)
        self.assertIn(f'{name}: no blueprint or bug trailer (Implements:, '
                      'Partially-Implements:, Closes-Bug:, ...)', problems)
        self.assertIn(f'{name}: no Signed-off-by: trailer (DCO)', problems)


class LintMessageTest(unittest.TestCase):

    GOOD = ('Add attach_mode to BlockDeviceMapping\n\nWhy it matters.\n\n'
            'Partially-Implements: blueprint volume-multiattach-enhancements\n'
            'Signed-off-by: Jane Dev <jane.developer.with.a.long.name@'
            'example.com>\nChange-Id: I' + 'a' * 40 + '\n')

    def test_good_message(self):
        self.assertEqual([], checks.lint_message('p', self.GOOD))

    def test_long_subject_and_body_line(self):
        message = self.GOOD.replace('Add attach_mode', 'Add ' + 'x' * 70)
        message = message.replace('Why it matters.', 'word ' * 20)
        self.assertEqual(['p: subject is 96 characters (about 50, never over '
                          '60)', 'p: line 3 is over 72 columns'],
                         checks.lint_message('p', message))

    def test_subject_of_61_characters(self):
        subject = 'Add attach_mode to BlockDeviceMapping'
        longer = subject + 'x' * (61 - len(subject))
        message = self.GOOD.replace(subject, longer)
        self.assertEqual(['p: subject is 61 characters (about 50, never over '
                          '60)'], checks.lint_message('p', message))
        message = self.GOOD.replace(subject, longer[:60])
        self.assertEqual([], checks.lint_message('p', message))

    def test_trailers_in_two_blocks(self):
        trailer = ('Partially-Implements: blueprint '
                   'volume-multiattach-enhancements\n')
        message = self.GOOD.replace(
            trailer, trailer + 'Generated-By: Claude\n\n')
        self.assertEqual(["p: trailers not in the last paragraph: "
                          "'Partially-Implements: blueprint "
                          "volume-multiattach-enhancements'"],
                         checks.lint_message('p', message))

    def test_depends_on_placeholder_until_upstream(self):
        change_id = 'I' + 'b' * 40
        message = self.GOOD.replace(
            'Partially-Implements:',
            f'Depends-On: https://review.opendev.org/q/{change_id}\n'
            'Partially-Implements:')
        self.assertEqual([], checks.lint_message('p', message))
        self.assertEqual(
            [f'p: Depends-On names {change_id}: replace it by the review '
             'URL of that change (https://review.opendev.org/c/openstack/'
             '<project>/+/<number>)'],
            checks.lint_message('p', message, upstream=True))
        review = message.replace(
            f'q/{change_id}', 'c/openstack/cinder/+/912345')
        self.assertEqual([], checks.lint_message('p', review, upstream=True))

    def test_bug_placeholder_until_upstream(self):
        message = self.GOOD.replace(
            'Partially-Implements: blueprint volume-multiattach-enhancements',
            'Closes-Bug: #NEW\nRelated-Bug: #1747985')
        self.assertEqual([], checks.lint_message('p', message))
        self.assertEqual(
            ['p: Closes-Bug: #NEW: file the bug (doc/source/upstream.rst) '
             'and give its number'],
            checks.lint_message('p', message, upstream=True))
        filed = message.replace('#NEW', '#2170001')
        self.assertEqual([], checks.lint_message('p', filed, upstream=True))

    def test_partial_bug_placeholder_until_upstream(self):
        message = self.GOOD.replace(
            'Partially-Implements: blueprint volume-multiattach-enhancements',
            'Partial-Bug: #NEW\nPartially-Implements: blueprint '
            'volume-multiattach-enhancements')
        self.assertEqual([], checks.lint_message('p', message))
        self.assertEqual(
            ['p: Partial-Bug: #NEW: file the bug (doc/source/upstream.rst) '
             'and give its number'],
            checks.lint_message('p', message, upstream=True))

    def test_depends_on_neither_url_nor_placeholder(self):
        message = self.GOOD.replace(
            'Partially-Implements:',
            'Depends-On: I' + 'b' * 40 + '\nPartially-Implements:')
        self.assertEqual(
            ["p: Depends-On 'I" + 'b' * 40 + "' is neither a review URL nor "
             "https://review.opendev.org/q/<Change-Id>"],
            checks.lint_message('p', message))

    def test_blueprint_of_another_project_named_in_the_text(self):
        self.assertEqual(
            ['p: a blueprint trailer this project cannot resolve: name the '
             'Nova blueprint in the text',
             'p: the text does not name the Nova blueprint ("Nova blueprint '
             '<name>")'],
            checks.lint_message('p', self.GOOD, blueprint_trailer=False))
        message = self.GOOD.replace(
            'Why it matters.\n\nPartially-Implements: blueprint '
            'volume-multiattach-enhancements\n',
            'Why it matters.\n\nPart of Nova blueprint '
            'volume-multiattach-enhancements.\n\n')
        self.assertEqual([], checks.lint_message(
            'p', message, blueprint_trailer=False))

    def test_fixup_and_non_ascii(self):
        message = 'fixup! ' + self.GOOD.replace('Why', 'Why \u2014')
        problems = checks.lint_message('p', message)
        self.assertIn('p: a fixup commit: squash it (git rebase -i '
                      '--autosquash base)', problems)
        self.assertIn('p: message is not ASCII', problems)

    def test_message_of_patch_unfolds_subject(self):
        patch = ('From 0000 Mon Sep 17 00:00:00 2001\nFrom: J <j@e>\n'
                 'Subject: [PATCH] A subject that git folded over\n two header'
                 ' lines\n\nBody.\n\nChange-Id: I1\n---\n f | 1 +\n')
        self.assertEqual('A subject that git folded over two header lines\n\n'
                         'Body.\n\nChange-Id: I1',
                         checks.commit_message_of_patch(patch))


class GithubMessageTest(unittest.TestCase):
    """The rules of a project reviewed on GitHub: no Gerrit trailer, the
    Nova blueprint or the issue fixed named.
    """

    FIX = ('compute: accept 202 from volumeattach.Create\n\n'
           'Nova answers 202 from microversion 2.101.\n\nFixes #NEW')

    def test_a_fix_naming_its_issue(self):
        self.assertEqual([], checks.lint_github_message('0001', self.FIX))

    def test_a_change_naming_the_nova_blueprint(self):
        self.assertEqual([], checks.lint_github_message(
            '0002', 'compute: add AttachMode\n\nNova blueprint '
            'volume-multiattach-enhancements: 2.105.'))

    def test_gerrit_trailers_and_no_reference_are_refused(self):
        self.assertEqual(
            ['0001: neither names the Nova blueprint ("Nova blueprint '
             '<name>") nor the issue it fixes ("Fixes #N")',
             '0001: a Gerrit trailer (Change-Id:) in a project reviewed on '
             'GitHub'],
            checks.lint_github_message(
                '0001', 'compute: a change\n\nText.\n\nChange-Id: I' +
                'a' * 40))

    def test_an_issue_not_filed_is_refused_upstream(self):
        self.assertEqual(['0001: Fixes #NEW: file the issue and give its '
                          'number'],
                         checks.lint_github_message('0001', self.FIX,
                                                    upstream=True))
        self.assertEqual([], checks.lint_github_message(
            '0001', self.FIX.replace('#NEW', '#4100'), upstream=True))


class RepositoryUpstreamTest(unittest.TestCase):
    """The Nova series as this repository holds it: clean for `check`,
    and `check --upstream` refuses each of its placeholders.
    """

    def test_check_upstream_refuses_the_placeholders_check_takes(self):
        nova = config.load_projects()['nova']
        self.assertEqual([], checks.check_series_files(nova))
        problems = checks.check_series_files(nova, upstream=True)
        for number in ('0001', '0002', '0003'):
            self.assertTrue(any(
                problem.startswith(number) and 'Closes-Bug: #NEW' in problem
                for problem in problems), number)
        self.assertTrue(any('Depends-On names I' in problem
                            for problem in problems))
        self.assertTrue(any('author Volume multiattach series' in problem
                            for problem in problems))
