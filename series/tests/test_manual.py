"""Tests of series.manual: the patch lists read from patches/, pages
reachable from the index, verbs named that exist, the module map.
"""

from pathlib import Path
import tempfile
import unittest

from series import config
from series import manual


class PatchesTest(unittest.TestCase):
    """On this repository's own patches."""

    def test_every_patch_in_series_order_with_its_subject(self):
        rows = manual.patches('cinder')
        self.assertEqual(
            [('0001-Allow-concurrent-reservations-of-multiattach-volumes'
              '.patch', 'Allow concurrent reservations of multiattach '
              'volumes'),
             ('0002-Make-connection-access_mode-follow-the-attachment-mo'
              '.patch', 'Make connection access_mode follow the attachment '
              'mode')], [row[:2] for row in rows])
        self.assertTrue(rows[0][2].startswith('A multiattach volume refused'))
        self.assertNotIn('\n', rows[0][2])

    def test_a_subject_folded_over_two_lines_is_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / '0001-x.patch'
            path.write_text(
                'From 0000 Mon Sep 17 00:00:00 2001\n'
                'From: A <a@example.org>\n'
                'Subject: [PATCH] compute: A subject long enough to be\n'
                ' folded\n\nWhy it is needed,\nwrapped.\n\nWhat.\n\n'
                'Change-Id: I0\n---\n a | 1 +\n')
            self.assertEqual(('compute: A subject long enough to be folded',
                              'Why it is needed, wrapped.'),
                             manual.patch(path))

    def test_the_list_numbers_every_nova_patch(self):
        lines = manual.patch_list_rst('nova')
        count = len(list((config.ROOT / 'patches' / 'nova').glob('*.patch')))
        numbered = [line for line in lines if line[:1].isdigit()]
        self.assertEqual([f'{number}. **' for number in range(1, count + 1)],
                         [line[:line.index('**') + 2] for line in numbered])


class ReachableTest(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.source = Path(tmp.name)
        (self.source / 'index.rst').write_text(
            'Title\n=====\n\n.. toctree::\n   :maxdepth: 2\n\n   a\n   sub/b\n'
            '\nAfter the toctree, not an entry\n')
        (self.source / 'a.rst').write_text(
            'A\n=\n\n.. toctree::\n\n   c\n')
        (self.source / 'sub').mkdir()
        (self.source / 'sub' / 'b.rst').write_text('B\n=\n')
        (self.source / 'c.rst').write_text('C\n=\n')

    def test_pages_reached_through_nested_toctrees(self):
        self.assertEqual([], manual.unreachable_pages(self.source))

    def test_a_page_no_toctree_names_is_reported(self):
        (self.source / 'lost.rst').write_text('Lost\n====\n')
        self.assertEqual(['lost'], manual.unreachable_pages(self.source))

    def test_this_manual(self):
        self.assertEqual([], manual.unreachable_pages(
            config.ROOT / manual.SOURCE))


class VerbsTest(unittest.TestCase):

    def test_the_verbs_of_the_command_line(self):
        verbs = manual.known_verbs()
        self.assertLessEqual({'apply', 'export', 'check', 'ci', 'demo',
                              'cloud', 'manual'}, verbs)
        self.assertNotIn('frobnicate', verbs)

    def test_a_verb_that_does_not_exist_is_named_with_its_file(self):
        with tempfile.TemporaryDirectory(dir=config.ROOT) as tmp:
            page = Path(tmp) / 'page.rst'
            page.write_text('Run ``tools/series apply nova`` then\n'
                            '``tools/series\nfrobnicate``.\n')
            self.assertEqual(
                {'frobnicate': [str(page.relative_to(config.ROOT))]},
                manual.unknown_verbs([page], manual.known_verbs()))

    def test_this_manual_and_readme(self):
        self.assertEqual({}, manual.unknown_verbs(manual.doc_files(),
                                                  manual.known_verbs()))


class ModuleMapTest(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        for name in ('series/__init__.py', 'series/config.py',
                     'series/cloud/__init__.py', 'series/cloud/guest.py',
                     'series/cloud/guest_write.c',
                     'series/tests/test_config.py'):
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('')
        self.page = self.root / 'design.rst'

    def write_map(self, *names):
        self.page.write_text(
            'Modules\n-------\n\n' +
            ''.join(f'* ``{name}``: what it holds.\n' for name in names) +
            '\nNot an entry: ``series.queue``.\n\n'
            '* ``projects.toml``: not a module.\n')

    def test_a_map_of_every_module_passes(self):
        self.write_map('series.config', 'series.cloud.guest')
        self.assertEqual({'series.config', 'series.cloud.guest'},
                         manual.mapped_modules(self.page))
        self.assertEqual([], manual.module_map_problems(self.root,
                                                        self.page))

    def test_a_module_missing_from_the_map_is_named(self):
        self.write_map('series.config')
        self.assertEqual(
            ['series.cloud.guest: not in the module map of design.rst'],
            manual.module_map_problems(self.root, self.page))

    def test_an_entry_naming_no_module_is_named(self):
        self.write_map('series.config', 'series.cloud.guest',
                       'series.cloud.gone')
        self.assertEqual(
            ['series.cloud.gone: in the module map of design.rst, no such '
             'module'], manual.module_map_problems(self.root, self.page))

    def test_this_manual(self):
        self.assertEqual([], manual.module_map_problems(
            config.ROOT, config.ROOT / manual.MODULE_MAP))

    def test_every_module_has_its_test_module(self):
        # As the module map says: series.cloud.content holds names only,
        # and test_cli.py tests both cli modules.
        tests = config.ROOT / 'series' / 'tests'
        self.assertEqual(['series.cloud.content'], sorted(
            name for name in manual.package_modules(config.ROOT)
            if not (tests / f'test_{name.rpartition(".")[2]}.py').exists()))
