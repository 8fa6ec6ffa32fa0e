"""Tests of series.config: projects.toml."""

from series import config
from series.tests import base


class ConfigTest(base.SeriesTestCase):

    def test_unknown_project_names_the_known_ones(self):
        (self.root / 'projects.toml').write_text(
            (self.root / 'projects.toml').read_text() +
            '\n[other]\nversion = "2.0"\nsha256 = "00"\n')
        with self.assertRaises(config.SeriesError) as raised:
            config.get_project('demo2')
        self.assertEqual("unknown project 'demo2' (known: demo, other)",
                         str(raised.exception))

    def test_pin_base_rewrites_one_section_only(self):
        original = (self.root / 'projects.toml').read_text()
        (self.root / 'projects.toml').write_text(
            original + '\n[other]\nversion = "1.0"\nsha256 = "00"\n')
        config.pin_base(config.get_project('demo'), '2.0', 'ab' * 32)
        projects = config.load_projects()
        self.assertEqual(('2.0', 'ab' * 32),
                         (projects['demo'].version, projects['demo'].sha256))
        self.assertEqual(('1.0', '00'),
                         (projects['other'].version, projects['other'].sha256))
        self.assertIn('constraints = "constraints/upper-constraints.txt"',
                      (self.root / 'projects.toml').read_text())

    def test_package_defaults_to_the_name(self):
        (self.root / 'projects.toml').write_text(
            (self.root / 'projects.toml').read_text() +
            '\n[python-democlient]\nversion = "2.0"\nsha256 = "00"\n'
            'package = "democlient"\nseries-requirements = ["demo"]\n'
            'lint-commands = [["ruff", "check", "{files}"]]\n')
        projects = config.load_projects()
        self.assertEqual('demo', projects['demo'].package)
        client = projects['python-democlient']
        self.assertEqual('democlient', client.package)
        self.assertEqual(('demo',), client.series_requirements)
        self.assertEqual((['ruff', 'check', '{files}'],),
                         client.lint_commands)
