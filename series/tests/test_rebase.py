"""Tests of series.rebase: a series moved onto another release."""

import functools
import http.server
import os
from pathlib import Path
import subprocess
import tempfile
import threading
from unittest import mock

from series import checks
from series import config
from series import go_module
from series import process
from series import queue
from series import rebase
from series import sdist
from series.tests import base
from series.tests import go_fixture

# Release 2.0 of the tiny project: five lines more at the top, so every
# hunk of the series moves.
CORE_2 = ''.join(f'new line {n}\n' for n in range(5)) + base.CORE
# Release 2.0 changing a line the series changes too: a conflict.
CORE_2_CONFLICT = base.CORE.replace('line 10\n', 'line 10 upstream\n')


class RebaseTest(base.SeriesTestCase):

    def setUp(self):
        super().setUp()
        self.make_series()
        self.patches_before = self.patch_bytes()
        self.toml_before = (self.root / 'projects.toml').read_text()

    def release(self, core):
        return base.sha256(base.make_sdist(self.index, core, version='2.0'))

    def rebase(self, sha256, **kwargs):
        return self.quiet(rebase.rebase, self.project, '2.0', sha256,
                          **kwargs)

    def test_clean_rebase_pins_the_new_release(self):
        digest = self.release(CORE_2)
        self.rebase(digest)
        project = config.get_project('demo')
        self.assertEqual(('2.0', digest), (project.version, project.sha256))
        # The patches now apply to 2.0 without offset, as check requires.
        self.assertEqual([], self.quiet(checks.check, project))
        self.assertNotEqual(self.patches_before, self.patch_bytes())
        self.assertEqual(list(self.patches_before), list(self.patch_bytes()))
        self.assertIn('# demo 2.0:', (project.patches / 'series').read_text())
        self.assertIn('base demo 2.0 (sdist verified), 2 patches in series, '
                      'work tree 2 commits, in sync', queue.status(project))
        self.assertIn('new line 0\n', (self.tree / 'demo/core.py').read_text())
        self.assertFalse(rebase.state_file(project).exists())

    def test_conflict_stops_with_instructions_then_continues(self):
        digest = self.release(CORE_2_CONFLICT)
        with self.assertRaises(config.SeriesError) as raised:
            self.rebase(digest)
        message = str(raised.exception)
        self.assertIn('0001-Spell-out-line-ten.patch (1 of 2) does not '
                      'apply to demo 2.0', message)
        self.assertIn('git am --continue', message)
        self.assertIn('tools/series rebase demo --continue', message)
        # Nothing pinned, nothing exported yet.
        self.assertEqual(self.toml_before,
                         (self.root / 'projects.toml').read_text())
        self.assertEqual(self.patches_before, self.patch_bytes())
        self.assertEqual('a rebase or am', queue.in_progress(self.tree))
        with self.assertRaisesRegex(config.SeriesError, 'in progress'):
            self.quiet(rebase.finish, self.project)
        # The user resolves the conflict as git says.
        core = self.tree / 'demo' / 'core.py'
        core.write_text(CORE_2_CONFLICT.replace('line 10 upstream\n',
                                                'line ten\n'))
        self.git('add', 'demo/core.py')
        subprocess.run(['git', 'am', '--continue'], cwd=self.tree, check=True,
                       capture_output=True,
                       env=dict(os.environ, **base.AUTHOR))
        self.quiet(rebase.finish, self.project)
        project = config.get_project('demo')
        self.assertEqual(('2.0', digest), (project.version, project.sha256))
        self.assertEqual([], self.quiet(checks.check, project))

    def test_continue_after_the_tree_was_rebuilt_is_refused(self):
        digest = self.release(CORE_2_CONFLICT)
        with self.assertRaises(config.SeriesError):
            self.rebase(digest)
        # The user gives up and goes back to the pinned base.
        self.quiet(queue.apply, self.project, force=True)
        with self.assertRaisesRegex(config.SeriesError,
                                    'the rebase was abandoned'):
            self.quiet(rebase.finish, self.project)
        self.assertEqual(self.toml_before,
                         (self.root / 'projects.toml').read_text())
        self.assertEqual(self.patches_before, self.patch_bytes())
        with self.assertRaisesRegex(config.SeriesError, 'no rebase'):
            self.quiet(rebase.finish, self.project)

    def test_a_result_that_does_not_check_clean_is_not_pinned(self):
        digest = self.release(CORE_2)
        with mock.patch.object(checks, 'check', return_value=['broken']), \
                self.assertRaisesRegex(config.SeriesError, 'broken'):
            self.rebase(digest)
        self.assertEqual(self.toml_before,
                         (self.root / 'projects.toml').read_text())
        self.assertEqual(self.patches_before, self.patch_bytes())

    def test_a_download_with_another_digest_is_refused(self):
        self.release(CORE_2)
        with self.assertRaisesRegex(config.SeriesError, 'does not match'):
            self.rebase('0' * 64)
        self.assertEqual(self.toml_before,
                         (self.root / 'projects.toml').read_text())

    def test_unexported_work_is_refused_before_anything_changes(self):
        digest = self.release(CORE_2)
        self.edit('demo/core.py', 'line 5\n', 'line five\n')
        with self.assertRaisesRegex(config.SeriesError, 'not exported'):
            self.rebase(digest)
        self.assertIn('line five', (self.tree / 'demo/core.py').read_text())

    def test_digest_read_from_the_package_index(self):
        digest = self.release(CORE_2)
        pages = self.root / 'simple'
        (pages / 'demo').mkdir(parents=True)
        (pages / 'demo' / 'index.html').write_text(
            '<a href="../../demo-1.0.tar.gz#sha256=00">demo-1.0.tar.gz</a>\n'
            f'<a href="../../demo-2.0.tar.gz#sha256={digest}">'
            'demo-2.0.tar.gz</a>\n')

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass
        handler = functools.partial(Quiet, directory=str(pages))
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        index = f'http://127.0.0.1:{server.server_address[1]}'
        self.assertEqual(digest,
                         sdist.published_pin(self.project, '2.0', index))
        with self.assertRaisesRegex(config.SeriesError,
                                    'lists no sdist of demo 3.0'):
            sdist.published_pin(self.project, '3.0', index)
        self.rebase(None, index=index)
        self.assertEqual(digest, config.get_project('demo').sha256)


class GoRebaseTest(base.RootTestCase):
    """A Go module's series moved onto the next version the Go module
    proxy serves, by the real go command.
    """

    def setUp(self):
        super().setUp()
        proxy = tempfile.TemporaryDirectory()
        self.addCleanup(proxy.cleanup)
        self.proxy = proxy.name
        h1 = go_module.hash1(go_fixture.serve(self, self.proxy))
        self.toml = (f'[demo]\nversion = "{go_fixture.VERSION}"\n'
                     f'kind = "go"\nmodule = "{go_fixture.MODULE}"\n'
                     f'h1 = "{h1}"\nreview = "github"\n')
        (self.root / 'projects.toml').write_text(self.toml)
        self.project = config.get_project('demo')
        with mock.patch.object(process, 'say'):
            queue.apply(self.project)
        tree = self.project.tree
        (tree / 'demo.go').write_text(
            go_fixture.FILES['demo.go'] +
            '\n// Triple triples.\nfunc Triple(n int) int { return 3 * n }\n')
        process.git('commit', '-q', '-a', '-m', 'Add Triple\n\nPart of '
                    'Nova blueprint volume-multiattach-enhancements.',
                    cwd=tree, env=base.AUTHOR)
        with mock.patch.object(process, 'say'):
            queue.export(self.project)
        self.patches = {p.name: p.read_bytes()
                        for p in self.project.patches.iterdir()}
        # v1.1.0 adds a file and a line above the series' hunk.
        self.next_zip = self.serve_next(dict(
            go_fixture.FILES,
            **{'demo.go': '// Package demo computes.\n' +
               go_fixture.FILES['demo.go'],
               'half.go': 'package demo\n\n// Half halves.\n'
               'func Half(n int) int { return n / 2 }\n'}))

    def serve_next(self, files):
        return go_fixture.serve(self, self.proxy, files, 'v1.1.0')

    def rebase(self, pin=None):
        with mock.patch.object(process, 'say'):
            rebase.rebase(self.project, 'v1.1.0', pin)

    def test_the_h1_the_proxy_serves_is_pinned(self):
        self.rebase()
        project = config.get_project('demo')
        self.assertEqual(('v1.1.0', go_module.hash1(self.next_zip)),
                         (project.version, project.h1))
        text = (project.tree / 'demo.go').read_text()
        self.assertTrue(text.startswith('// Package demo computes.\n'))
        self.assertIn('func Triple', text)
        self.assertTrue((project.tree / 'half.go').exists())
        self.assertEqual([], self.quiet(checks.check, project))
        self.assertIn('base demo v1.1.0 (module zip verified), 1 patch in '
                      'series, work tree 1 commit, in sync',
                      queue.status(project))

    def test_a_module_against_the_pin_given_is_refused(self):
        with self.assertRaisesRegex(config.SeriesError,
                                    'does not match|is not what'):
            self.rebase(pin='h1:' + 'A' * 43 + '=')
        self.assertEqual(self.toml,
                         (self.root / 'projects.toml').read_text())
        self.assertEqual(self.patches,
                         {p.name: p.read_bytes()
                          for p in self.project.patches.iterdir()})

    def quiet(self, function, *args):
        with mock.patch.object(process, 'say'):
            return function(*args)


class GoRebaseFromAnotherProxyTest(GoRebaseTest):
    """v1.1.0 served only by a second proxy, named with --index."""

    @property
    def other_proxy(self):
        if not hasattr(self, '_other'):
            other = tempfile.TemporaryDirectory()
            self.addCleanup(other.cleanup)
            self._other = Path(other.name)
        return self._other

    def serve_next(self, files):
        # Not in the go command's proxy: only in the other one.
        return go_fixture.publish(self.other_proxy, files, 'v1.1.0')

    def rebase(self, pin=None):
        with mock.patch.object(process, 'say'):
            rebase.rebase(self.project, 'v1.1.0', pin,
                          f'file://{self.other_proxy}')

    def test_a_pin_given_is_held_to_what_the_index_serves(self):
        self.rebase(pin=go_module.hash1(self.next_zip))
        self.assertEqual('v1.1.0', config.get_project('demo').version)
