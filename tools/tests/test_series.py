"""Unit tests of tools/series, on a tiny project built in a temporary root.

Run: python3 -m unittest discover -s tools/tests
"""

import argparse
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import io
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import unittest
from unittest import mock

TOOL = Path(__file__).resolve().parents[1] / 'series'
REPOSITORY = TOOL.parents[1]
loader = importlib.machinery.SourceFileLoader('series', str(TOOL))
spec = importlib.util.spec_from_loader('series', loader)
series = importlib.util.module_from_spec(spec)
loader.exec_module(series)

AUTHOR = {'GIT_AUTHOR_NAME': 'Jane Dev',
          'GIT_AUTHOR_EMAIL': 'jane@example.com',
          'GIT_COMMITTER_NAME': 'Jane Dev',
          'GIT_COMMITTER_EMAIL': 'jane@example.com',
          'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1'}

CORE = ''.join(f'line {n}\n' for n in range(1, 41))

BACKEND = '''\
import os


def prepare_metadata_for_build_wheel(directory, config_settings=None):
    info = os.path.join(directory, 'demo-1.0.dist-info')
    os.makedirs(info)
    with open(os.path.join(info, 'METADATA'), 'w') as f:
        f.write('Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n')
    return 'demo-1.0.dist-info'
'''

MESSAGE = '''{subject}

Explain why the change is needed, wrapped at seventy-two columns as
Nova asks.

Partially-Implements: blueprint volume-multiattach-enhancements
Signed-off-by: Jane Dev <jane@example.com>
'''


def make_sdist(directory, core=CORE):
    """Write demo-1.0.tar.gz, a minimal sdist pip can download offline."""
    files = {'PKG-INFO': 'Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n',
             'pyproject.toml': '[build-system]\nrequires = []\n'
                               'build-backend = "backend"\n'
                               'backend-path = ["."]\n',
             'backend.py': BACKEND,
             'demo/__init__.py': '',
             'demo/core.py': core}
    path = Path(directory) / 'demo-1.0.tar.gz'
    with tarfile.open(path, 'w:gz') as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f'demo-1.0/{name}')
            info.size = len(data)
            info.mtime = 1_600_000_000
            tar.addfile(info, io.BytesIO(data))
    return path


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class SeriesTestCase(unittest.TestCase):

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix='series-test-'))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.index = self.root / 'index'
        self.index.mkdir()
        sdist = make_sdist(self.index)
        (self.root / 'projects.toml').write_text(
            f'[demo]\nversion = "1.0"\nsha256 = "{sha256(sdist)}"\n'
            'constraints = "constraints/upper-constraints.txt"\n'
            'unit-tests = "demo/tests/unit"\n'
            'functional-tests = "demo/tests/functional"\n')
        (self.root / 'constraints').mkdir()
        (self.root / 'constraints' / 'upper-constraints.txt').write_text(
            'demo===0.9\ndemo-client===2.0\noslo.db===18.1.0\n')
        downloads = self.root / '.work' / 'downloads'
        downloads.mkdir(parents=True)
        shutil.copy(sdist, downloads)
        (self.root / 'patches' / 'demo').mkdir(parents=True)
        patcher = mock.patch.object(series, 'ROOT', self.root)
        patcher.start()
        self.addCleanup(patcher.stop)
        # pip, when a test makes the tool download, sees only self.index.
        env = mock.patch.dict(os.environ, {
            'PIP_NO_INDEX': '1', 'PIP_FIND_LINKS': str(self.index),
            'PIP_CONFIG_FILE': os.devnull})
        env.start()
        self.addCleanup(env.stop)
        self.project = series.get_project('demo')
        self.tree = self.project.tree

    def quiet(self, function, *args, **kwargs):
        with contextlib.redirect_stdout(io.StringIO()):
            return function(*args, **kwargs)

    def git(self, *args):
        return subprocess.run(['git', *args], cwd=self.tree, check=True,
                              text=True, capture_output=True,
                              env=dict(os.environ, **AUTHOR)).stdout

    def edit(self, path, old, new):
        target = self.tree / path
        text = target.read_text()
        self.assertIn(old, text)
        target.write_text(text.replace(old, new, 1))

    def commit(self, subject, message=MESSAGE, *options):
        self.git('add', '-A')
        self.git('commit', '-q', *options, '-m',
                 message.format(subject=subject))

    def make_series(self):
        """Apply the empty series, commit two changes, export them."""
        self.quiet(series.apply, self.project)
        self.edit('demo/core.py', 'line 10\n', 'line ten\n')
        self.commit('Spell out line ten')
        self.edit('demo/core.py', 'line 30\n', 'line thirty\n')
        (self.tree / 'demo' / 'new.py').write_text('NEW = True\n')
        self.commit('Spell out line thirty and add a module')
        self.quiet(series.export, self.project)

    def patch_bytes(self):
        return {p.name: p.read_bytes()
                for p in sorted(self.project.patches.iterdir())}

    def problems(self):
        return self.quiet(series.check, self.project)


class ApplyExportTest(SeriesTestCase):

    def test_apply_builds_base_plus_one_commit_per_patch(self):
        self.make_series()
        self.quiet(series.apply, self.project)
        log = self.git('log', '--format=%s', 'base..HEAD').splitlines()
        self.assertEqual(['Spell out line thirty and add a module',
                          'Spell out line ten'], log)
        self.assertEqual('demo 1.0', self.git('log', '-1', '--format=%s',
                                              'base').strip())
        self.assertIn('line thirty', (self.tree / 'demo/core.py').read_text())
        self.assertTrue((self.tree / 'demo/new.py').exists())

    def test_base_commit_is_the_same_on_every_apply(self):
        self.quiet(series.apply, self.project)
        first = self.git('rev-parse', 'base')
        self.quiet(series.apply, self.project)
        self.assertEqual(first, self.git('rev-parse', 'base'))

    def test_base_holds_every_file_of_the_tarball(self):
        self.quiet(series.apply, self.project)
        files = self.git('ls-tree', '-r', '--name-only', 'base').split()
        self.assertEqual(sorted(['PKG-INFO', 'backend.py', 'demo/__init__.py',
                                 'demo/core.py', 'pyproject.toml']),
                         sorted(files))

    def test_export_writes_series_and_format_patch_files(self):
        self.make_series()
        self.assertEqual(
            ['0001-Spell-out-line-ten.patch',
             '0002-Spell-out-line-thirty-and-add-a-module.patch'],
            series.read_series(self.project))
        text = (self.project.patches /
                '0001-Spell-out-line-ten.patch').read_text()
        self.assertTrue(text.startswith('From ' + '0' * 40))
        self.assertIn('Subject: [PATCH] Spell out line ten\n', text)
        self.assertNotRegex(text, r'\n-- \n\d')  # no git version signature

    def test_apply_then_export_changes_no_byte(self):
        self.make_series()
        before = self.patch_bytes()
        self.quiet(series.apply, self.project)
        self.quiet(series.export, self.project)
        self.assertEqual(before, self.patch_bytes())

    def test_export_ignores_user_git_configuration(self):
        self.make_series()
        before = self.patch_bytes()
        config = self.root / 'gitconfig'
        config.write_text('[format]\n\tsignature = my sig\n\tnumbered = true'
                          '\n[diff]\n\tnoprefix = true\n\tcontext = 7\n')
        with mock.patch.dict(os.environ, {'GIT_CONFIG_GLOBAL': str(config)}):
            self.quiet(series.export, self.project)
        self.assertEqual(before, self.patch_bytes())

    def test_export_removes_patches_of_dropped_commits(self):
        self.make_series()
        self.git('reset', '-q', '--hard', 'HEAD~1')
        self.quiet(series.export, self.project)
        self.assertEqual(['0001-Spell-out-line-ten.patch', 'series'],
                         sorted(self.patch_bytes()))

    def test_export_refuses_uncommitted_edits(self):
        self.make_series()
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        with self.assertRaisesRegex(series.SeriesError, 'demo/core.py'):
            self.quiet(series.export, self.project)

    def test_apply_refuses_unexported_work_and_names_it(self):
        self.make_series()
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        self.commit('Spell out line five')
        (self.tree / 'demo' / 'core.py').write_text('edited\n')
        with self.assertRaises(series.SeriesError) as raised:
            self.quiet(series.apply, self.project)
        self.assertIn('"Spell out line five" is not exported',
                      str(raised.exception))
        self.assertIn('demo/core.py', str(raised.exception))
        self.quiet(series.apply, self.project, force=True)
        self.assertEqual([], self.problems())

    def test_change_id_from_hook_survives_reexport(self):
        self.quiet(series.apply, self.project)
        self.edit('demo/core.py', 'line 2\n', 'line two\n')
        self.git('add', '-A')
        message = MESSAGE.format(subject='Spell out line two')
        subprocess.run(['git', 'commit', '-q', '-m', message], cwd=self.tree,
                       check=True, env=dict(os.environ, **AUTHOR))
        body = self.git('log', '-1', '--format=%B')
        change_ids = re.findall(r'^Change-Id: I[0-9a-f]{40}$', body, re.M)
        self.assertEqual(1, len(change_ids))
        self.quiet(series.export, self.project)
        before = self.patch_bytes()
        self.quiet(series.apply, self.project)
        self.git('commit', '-q', '--amend', '--no-edit')  # hook runs again
        self.quiet(series.export, self.project)
        self.assertEqual(before, self.patch_bytes())
        self.assertIn(change_ids[0], self.git('log', '-1', '--format=%B'))

    def test_apply_refuses_series_naming_a_missing_patch(self):
        (self.project.patches / 'series').write_text('0001-gone.patch\n')
        with self.assertRaisesRegex(series.SeriesError, '0001-gone.patch'):
            self.quiet(series.apply, self.project)


class CheckTest(SeriesTestCase):

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
        self.assertEqual([], self.quiet(series.check, self.project,
                                        quilt=True))

    @unittest.skipUnless(shutil.which('quilt'), 'quilt is not installed '
                         '(tools/setup-test-host installs it for CI)')
    def test_quilt_names_patch_at_an_offset(self):
        self.make_series()
        shutil.rmtree(self.tree)
        path = self.project.patches / '0001-Spell-out-line-ten.patch'
        text = path.read_text()
        path.write_text(text.replace('@@ -7,7 +7,7 @@', '@@ -4,7 +4,7 @@'))
        problems = self.quiet(series.check, self.project, quilt=True)
        self.assertTrue(any(p.startswith('quilt push -a does not apply') and
                            'offset' in p for p in problems), problems)

    def test_quilt_required_when_asked_for(self):
        self.make_series()
        with mock.patch.object(series.shutil, 'which', return_value=None):
            problems = self.quiet(series.check, self.project, quilt=True)
        self.assertIn('quilt is not installed (tools/setup-test-host '
                      'installs it)', problems)

    def test_rpm_patch_lines(self):
        self.make_series()
        self.assertEqual(
            ['Patch0001: 0001-Spell-out-line-ten.patch',
             'Patch0002: 0002-Spell-out-line-thirty-and-add-a-module.patch'],
            series.rpm_patch_lines(self.project))

    def test_names_message_without_trailers(self):
        self.quiet(series.apply, self.project)
        self.edit('demo/core.py', 'line 3\n', 'line three\n')
        self.commit('Spell out line three', '{subject}\n\nWhy.\n',
                    '--no-verify')  # without the Change-Id hook
        self.quiet(series.export, self.project)
        problems = self.problems()
        name = '0001-Spell-out-line-three.patch'
        self.assertIn(f'{name}: needs exactly one Change-Id: I<40 hex> '
                      'trailer, has 0', problems)
        self.assertIn(f'{name}: no blueprint or bug trailer (Implements:, '
                      'Partially-Implements:, Closes-Bug:, ...)', problems)
        self.assertIn(f'{name}: no Signed-off-by: trailer (DCO)', problems)


class ReleaseNotesRepoTest(SeriesTestCase):

    def test_holds_the_series_notes_and_the_current_series_page(self):
        self.quiet(series.apply, self.project)
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

        repo = series.release_notes_repo(self.project, 'releasenotes/source')

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


class LintMessageTest(unittest.TestCase):

    GOOD = ('Add attach_mode to BlockDeviceMapping\n\nWhy it matters.\n\n'
            'Partially-Implements: blueprint volume-multiattach-enhancements\n'
            'Signed-off-by: Jane Dev <jane.developer.with.a.long.name@'
            'example.com>\nChange-Id: I' + 'a' * 40 + '\n')

    def test_good_message(self):
        self.assertEqual([], series.lint_message('p', self.GOOD))

    def test_long_subject_and_body_line(self):
        message = self.GOOD.replace('Add attach_mode', 'Add ' + 'x' * 70)
        message = message.replace('Why it matters.', 'word ' * 20)
        self.assertEqual(['p: subject is 96 characters (about 50, never over '
                          '60)', 'p: line 3 is over 72 columns'],
                         series.lint_message('p', message))

    def test_subject_of_61_characters(self):
        subject = 'Add attach_mode to BlockDeviceMapping'
        longer = subject + 'x' * (61 - len(subject))
        message = self.GOOD.replace(subject, longer)
        self.assertEqual(['p: subject is 61 characters (about 50, never over '
                          '60)'], series.lint_message('p', message))
        message = self.GOOD.replace(subject, longer[:60])
        self.assertEqual([], series.lint_message('p', message))

    def test_trailers_in_two_blocks(self):
        trailer = ('Partially-Implements: blueprint '
                   'volume-multiattach-enhancements\n')
        message = self.GOOD.replace(
            trailer, trailer + 'Generated-By: Claude\n\n')
        self.assertEqual(["p: trailers not in the last paragraph: "
                          "'Partially-Implements: blueprint "
                          "volume-multiattach-enhancements'"],
                         series.lint_message('p', message))

    def test_fixup_and_non_ascii(self):
        message = 'fixup! ' + self.GOOD.replace('Why', 'Why \u2014')
        problems = series.lint_message('p', message)
        self.assertIn('p: a fixup commit: squash it (git rebase -i '
                      '--autosquash base)', problems)
        self.assertIn('p: message is not ASCII', problems)

    def test_message_of_patch_unfolds_subject(self):
        patch = ('From 0000 Mon Sep 17 00:00:00 2001\nFrom: J <j@e>\n'
                 'Subject: [PATCH] A subject that git folded over\n two header'
                 ' lines\n\nBody.\n\nChange-Id: I1\n---\n f | 1 +\n')
        self.assertEqual('A subject that git folded over two header lines\n\n'
                         'Body.\n\nChange-Id: I1',
                         series.commit_message_of_patch(patch))


class BaseTest(SeriesTestCase):

    def test_fetch_downloads_and_verifies(self):
        self.project.sdist.unlink()
        path = self.quiet(series.fetch_base, self.project)
        self.assertEqual(self.project.sha256, sha256(path))

    def test_fetch_replaces_a_corrupt_cached_download(self):
        self.project.sdist.write_bytes(b'not the sdist')
        path = self.quiet(series.fetch_base, self.project)
        self.assertEqual(self.project.sha256, sha256(path))

    def test_fetch_refuses_a_download_with_another_sha256(self):
        self.project.sdist.unlink()
        make_sdist(self.index, core='tampered\n')
        with self.assertRaisesRegex(series.SeriesError,
                                    'does not match the pin'):
            self.quiet(series.fetch_base, self.project)
        self.assertFalse(self.project.sdist.exists())

    def test_constraints_drop_the_project_under_test(self):
        self.assertEqual('demo-client===2.0\noslo.db===18.1.0\n',
                         series.constraints_for(self.project))

    def test_constraints_missing_refused_before_downloading(self):
        self.project.sdist.unlink()
        (self.root / 'constraints' / 'upper-constraints.txt').unlink()
        with self.assertRaisesRegex(
                series.SeriesError,
                'constraints/upper-constraints.txt .* is not in the '
                'repository'):
            self.quiet(series.fetch_base, self.project)
        self.assertFalse(self.project.sdist.exists())

    def test_the_repository_pins_its_own_constraints(self):
        # Nothing outside the repository: every project names a file of it.
        with mock.patch.object(series, 'ROOT', REPOSITORY):
            for project in series.load_projects().values():
                self.assertTrue(project.constraints_file.is_relative_to(
                    REPOSITORY))
                series.check_constraints(project)

    def test_series_file_comments_and_options(self):
        (self.project.patches / 'series').write_text(
            '# comment\n\n0001-a.patch\n0002-b.patch -p1 # trailing\n')
        self.assertEqual(['0001-a.patch', '0002-b.patch'],
                         series.read_series(self.project))
        (self.project.patches / 'series').write_text('0001-a.patch -p0\n')
        with self.assertRaisesRegex(series.SeriesError, 'only -p1'):
            series.read_series(self.project)

    def test_status_reports_sync(self):
        self.make_series()
        self.assertEqual('demo: base demo 1.0 (sdist verified), 2 patches in '
                         'series, work tree 2 commits, in sync',
                         series.status(self.project))
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        self.assertIn('NOT in sync (1 problems', series.status(self.project))


class SelectTestsTest(SeriesTestCase):

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
        'demo/tests/unit/test_helper.py': 'volume.helper()\n',
    }

    def select(self, changed):
        for path, text in self.FILES.items():
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_text(text)
        self.project.always = ('demo.tests.unit.test_always',)
        self.project.expensive = ('demo.tests.functional.test_servers',)
        return series.select_tests(self.project, self.root, changed)

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

    def test_arguments_go_to_the_suite_they_name(self):
        self.select([])
        unit, functional = series.split_filters(self.project, self.root, [
            'demo.tests.unit.compute.test_api',
            'demo.tests.functional.test_boot', 'demo.tests.functional',
            'test_something$'])
        self.assertEqual([r'^demo\.tests\.unit\.compute\.test_api\.',
                          'test_something$'], unit)
        self.assertEqual([r'^demo\.tests\.functional\.test_boot\.',
                          r'^demo\.tests\.functional\.'], functional)


class SummaryTest(unittest.TestCase):

    def test_last_line_is_the_totals(self):
        out = io.StringIO()
        suites = [series.SuiteResult('a', passed=3, failed=1, skipped=2),
                  series.SuiteResult('b', passed=4)]
        with contextlib.redirect_stdout(out):
            code = series.print_summary(suites, started=0)
        self.assertEqual(1, code)
        self.assertEqual('7 passed, 1 failed', out.getvalue().splitlines()[-1])


class CompareContractTest(unittest.TestCase):

    EXPECTED = {'test_fixed': False, 'test_kept': True}
    DOCS = {'test_fixed': 'Fixed by the series.',
            'test_kept': 'Already right in the release.'}

    def compare(self, release, patched):
        return series.compare_contract(self.EXPECTED, release, patched,
                                       self.DOCS, '29.0.0')

    @staticmethod
    def outcomes(fixed, kept):
        return {'test_fixed': {'holds': fixed, 'detail': ''},
                'test_kept': {'holds': kept, 'detail': ''}}

    def test_release_as_recorded_and_patched_all_holding(self):
        rows, problems = self.compare(self.outcomes(False, True),
                                      self.outcomes(True, True))
        self.assertEqual([], problems)
        self.assertEqual([('Fixed by the series.', 'FAILS', 'holds'),
                          ('Already right in the release.', 'holds',
                           'holds')], rows)

    def test_case_failing_on_the_patched_tree(self):
        _, problems = self.compare(self.outcomes(False, True),
                                   self.outcomes(True, False))
        self.assertEqual(1, len(problems))
        self.assertIn('test_kept does not hold on the patched tree',
                      problems[0])

    def test_release_no_longer_as_recorded(self):
        _, problems = self.compare(self.outcomes(True, True),
                                   self.outcomes(True, True))
        self.assertEqual(['test_fixed on 29.0.0: recorded as failing, '
                          'holds now'], problems)

    def test_case_not_run(self):
        _, problems = self.compare({}, self.outcomes(True, True))
        self.assertEqual(2, len(problems))


class PipProgressTest(unittest.TestCase):

    def test_condenses_pip_output(self):
        lines = [f'Collecting package{n}==1.0\n' for n in range(1, 6)] + [
            "WARNING: Location '/nowhere' is ignored: it is not a URL\n",
            '  Downloading package5-1.0.tar.gz (10 kB)\n',
            'Building wheel for package5 (pyproject.toml): started\n',
            'Installing collected packages: package1, package2, package5\n',
            'ERROR: something went wrong\n']
        output = []
        progress = list(series.pip_progress(lines, output, every=2))
        self.assertEqual([
            '  pip: 2 requirements resolved (package2==1.0)',
            '  pip: 4 requirements resolved (package4==1.0)',
            '  pip: building package5 from source',
            '  pip: installing 3 packages',
            '  ERROR: something went wrong'], progress)
        self.assertEqual(len(lines) - 1, len(output))


FAKE_SCENARIO = """
import http.server, json, os, signal, sys, threading
from pathlib import Path

# Run in Nova's native threading mode, whatever the tests' own setting.
assert os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] == 'true'
mode = sys.argv[1]
transcript = Path(sys.argv[sys.argv.index('--transcript') + 1])
print('step   expected   observed')
if mode == 'failing':
    print('1 steps as stated, 1 not')
    sys.exit(1)
print('3 steps as stated, 0 not: the feature works end to end', flush=True)
if '--keep-running' not in sys.argv:
    sys.exit(0)

class API(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.headers['X-Auth-Token'] != 'good' and mode != 'no-auth':
            self.send_response(401)
            self.end_headers()
            return
        if self.path.endswith('/servers'):
            body = {'servers': [{'id': 'abc'}]}
        else:
            attachment = {'volumeId': 'v'}
            if mode != 'no-mode':
                attachment['attach_mode'] = 'ro'
            body = {'volumeAttachments': [attachment]}
        self.send_response(200)
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args):
        pass

server = http.server.HTTPServer(('127.0.0.1', 0), API)
threading.Thread(target=server.serve_forever, daemon=True).start()
stop = threading.Event()
signal.signal(signal.SIGINT, lambda *_: stop.set())
transcript.parent.mkdir(parents=True, exist_ok=True)
transcript.with_name('endpoint.json').write_text(json.dumps({
    'endpoint': 'http://127.0.0.1:%d/v2.1' % server.server_address[1],
    'microversion': '2.105', 'TOKEN': 'good', 'ADMIN_TOKEN': 'admin'}))
stop.wait()
if mode == 'hangs':
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Event().wait()
"""


class EndToEndTest(SeriesTestCase):
    """The CI step that runs the demo scenario and probes its API."""

    def end_to_end(self, mode, function=series.end_to_end):
        script = self.root / 'fake_scenario.py'
        script.write_text(FAKE_SCENARIO)
        self.tree.mkdir(parents=True, exist_ok=True)
        self.project.test_env['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = 'False'

        def command(project, keep_running=False, port=0):
            return [sys.executable, str(script), mode, '--transcript',
                    str(series.demo_dir() / 'transcript.md')] + (
                        ['--keep-running'] if keep_running else [])
        with mock.patch.object(series, 'apply'), \
                mock.patch.object(series, 'scenario_command', command), \
                mock.patch.object(series, 'get_project',
                                  return_value=self.project):
            if function is series.demo:
                return function(argparse.Namespace(
                    project='nova', force=False, keep_running=False, port=0))
            return self.quiet(function, self.project, timeout=60)

    def test_demo_is_of_nova(self):
        error = io.StringIO()
        with contextlib.redirect_stderr(error):
            self.assertEqual(2, self.quiet(series.main, ['demo', 'cinder']))
        self.assertIn('the demo shows the Nova series', error.getvalue())

    def test_demo_returns_the_scenario_exit_code(self):
        handler = signal.getsignal(signal.SIGINT)
        for mode, expected in (('green', 0), ('failing', 1)):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(expected,
                                 self.end_to_end(mode, series.demo))
            self.assertIn('demo: [3/3]', out.getvalue())
        # Ctrl-C works again in the caller once the scenario has ended.
        self.assertIs(handler, signal.getsignal(signal.SIGINT))

    def test_green_scenario_reached_from_outside_and_stopped(self):
        result = self.end_to_end('green')
        self.assertEqual((3 + 3, 0), (result.passed, result.failed))

    def test_failing_scenario(self):
        result = self.end_to_end('failing')
        self.assertEqual((1, 2), (result.passed, result.failed))

    def test_attach_mode_missing_from_the_api(self):
        result = self.end_to_end('no-mode')
        self.assertEqual((5, 1), (result.passed, result.failed))

    def test_any_token_accepted(self):
        result = self.end_to_end('no-auth')
        self.assertEqual((5, 1), (result.passed, result.failed))

    def test_scenario_that_does_not_stop_is_killed(self):
        with mock.patch.object(series.subprocess.Popen, 'wait',
                               side_effect=[subprocess.TimeoutExpired(
                                   'scenario', 120), 0]) as wait:
            result = self.end_to_end('hangs')
        self.assertEqual(2, wait.call_count)
        self.assertEqual((6, 1), (result.passed, result.failed))


class TypecheckTestCase(unittest.TestCase):

    def test_nova_is_type_checked_as_its_tox_does(self):
        nova = series.load_projects()['nova']
        self.assertIn('mypy', nova.type_check_packages)
        self.assertIsInstance(nova.type_check_packages, tuple)

    def test_project_without_type_check_packages_is_skipped(self):
        project = series.Project(name='cinder', version='29.0.0', sha256='0')
        with mock.patch.object(series, 'run') as run:
            result = series.typecheck(project)
        run.assert_not_called()
        self.assertEqual((0, 0), (result.passed, result.failed))


if __name__ == '__main__':
    unittest.main()


class StandaloneCloneTest(SeriesTestCase):
    """The CI step that runs the tool from a clone of the repository alone."""

    def commit_tool(self, script):
        tool = self.root / 'tools' / 'series'
        tool.parent.mkdir()
        tool.write_text(script)
        for args in (['init', '-q'], ['add', '-A'],
                     ['commit', '-q', '-m', 'repository']):
            subprocess.run(['git', *args], cwd=self.root, check=True,
                           env=dict(os.environ, **AUTHOR))

    def test_commands_run_in_a_clone_with_nothing_beside_it(self):
        # The stand-in tool records where it runs, what sits beside its
        # repository and whether a SERIES_ variable reached it.
        self.commit_tool(
            'import os, sys\n'
            'from pathlib import Path\n'
            'root = Path(__file__).resolve().parents[1]\n'
            'print(sys.argv[1:], root != Path(os.environ["ORIGINAL"]),\n'
            '      sorted(p.name for p in root.parent.iterdir()),\n'
            '      [k for k in os.environ if k.startswith("SERIES_")])\n'
            'sys.exit(1 if sys.argv[1] == "demo" else 0)\n')
        with mock.patch.dict(os.environ, {'ORIGINAL': str(self.root),
                                          'SERIES_ROOT': str(self.root)}):
            result = self.quiet(series.standalone_clone,
                                series.load_projects())
        # status for the one project of projects.toml, then the demo.
        self.assertEqual((1, 1), (result.passed, result.failed))
        self.assertIn('tools/series demo failed', result.error)
        log = (self.root / '.work' / 'logs' /
               'standalone-clone.log').read_text()
        self.assertIn("['status', 'demo'] True ['repository'] []", log)
        self.assertIn("['demo'] True ['repository'] []", log)
