"""Tests of series.package_imports: the imports read from the source,
cycles found, and none in the package itself.
"""

from pathlib import Path
import tempfile
import unittest

from series import config
from series import manual
from series import package_imports


def package(files):
    """A package `series` with `files` ({relative path: source})."""
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name)
    for name, text in {'series/__init__.py': '', **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return tmp, root


class ImportsTest(unittest.TestCase):

    def test_every_form_of_import_and_no_test_module(self):
        tmp, root = package({
            'series/config.py': 'import os\n',
            'series/cloud/__init__.py': '',
            'series/cloud/rest.py': 'from series import config\n',
            'series/cloud/deploy.py': ('from series.cloud import rest\n'
                                       'from series.cloud.rest import x\n'
                                       'import series.config\n'),
            'series/tests/test_rest.py': 'from series.cloud import rest\n'})
        self.addCleanup(tmp.cleanup)
        self.assertEqual(
            {'series': [], 'series.cloud': [], 'series.config': [],
             'series.cloud.rest': ['series.config'],
             'series.cloud.deploy': ['series.cloud.rest', 'series.config']},
            package_imports.imports(root))
        self.assertIn('* ``cloud.deploy``: ``cloud.rest``, ``config``',
                      package_imports.imports_rst(root))

    def test_a_cycle_is_found(self):
        self.assertEqual([['a', 'b', 'a']], package_imports.cycles(
            {'a': ['b'], 'b': ['a'], 'c': ['a']}))
        self.assertEqual([], package_imports.cycles({'a': ['b'], 'b': []}))

    def test_the_package_has_no_cycle(self):
        graph = package_imports.imports()
        self.assertIn('series.cloud.ledger', graph)
        self.assertEqual([], package_imports.cycles(graph))

    def test_each_module_imports_only_modules_listed_above_it(self):
        # The manual's module map lists them in that order, the cloud
        # package where its first module is.
        order = list(dict.fromkeys(
            name.split('.')[1] for name in manual.module_map(
                config.ROOT / manual.MODULE_MAP)))
        graph = package_imports.imports()
        for module, targets in graph.items():
            name = module.split('.')[1] if '.' in module else None
            if name is None or name == 'cloud':
                continue
            self.assertIn(name, order)
            for target in targets:
                above = target.split('.')[1]
                if above != name:
                    self.assertLess(order.index(above), order.index(name),
                                    f'{module} imports {target}')

    def test_only_what_installs_imports_the_installer(self):
        # Steps and clients take names from cloud.content, credentials
        # from cloud.rest and cloud.layout, commands from cloud.services.
        importers = sorted(module for module, targets in
                           package_imports.imports().items()
                           if 'series.cloud.deploy' in targets)
        self.assertEqual(['series.ci', 'series.cloud.cli',
                          'series.cloud.scenario', 'series.cloud.upgrade'],
                         importers)
