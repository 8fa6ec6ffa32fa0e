"""Check the specs under specs/cinder/ as cinder-specs checks a spec.

cinder-specs' tests/nova_checks.py parses each spec with docutils and
fails one that does not have exactly its eight sections, that misses one
of the subsections it names, or that has a line of 80 characters or more
(lines with a URL aside), a carriage return or trailing spaces.

This module applies those rules, with CINDER_TITLES in the order of
cinder-specs' template and its current specs (which add "Active/Active HA
impact"), and, as for the Nova spec, is stricter: the template's order,
no docutils warning, a blueprint URL that matches the file name, and the
Change-Ids of the Cinder series in patches/cinder/, exactly.
"""

import glob
import os
import re
import unittest

from specs.tests import test_titles as nova_checks

CINDER_SPECS = os.path.join(nova_checks.SPECS_DIR, 'cinder')
BLUEPRINT_URL = 'https://blueprints.launchpad.net/cinder/+spec/'
CINDER_TITLES = {
    'Problem description': [],
    'Use Cases': [],
    'Proposed change': [
        'Alternatives', 'Data model impact', 'REST API impact',
        'Security impact', 'Active/Active HA impact', 'Notifications impact',
        'Other end user impact', 'Performance Impact',
        'Other deployer impact', 'Developer impact'],
    'Implementation': ['Assignee(s)', 'Work Items'],
    'Dependencies': [],
    'Testing': [],
    'Documentation Impact': [],
    'References': [],
}
URL = re.compile(r'https?://')


def cinder_specs():
    return sorted(glob.glob(os.path.join(CINDER_SPECS, '*', '*.rst')))


def line_problems(raw):
    """cinder-specs' line rules: under 80 characters unless the line holds
    a URL, no carriage return, no trailing spaces.
    """
    msgs = ['%d literal carriage returns' % raw.count('\r')] \
        if '\r' in raw else []
    for number, line in enumerate(raw.split('\n'), 1):
        if len(line) >= 80 and not URL.search(line):
            msgs.append('line %d: %d characters' % (number, len(line)))
        if line != line.rstrip():
            msgs.append('line %d: trailing whitespace' % number)
    return msgs


def cinder_change_ids():
    return {change_id for change_id, path
            in nova_checks.series_change_ids().items()
            if path.startswith(os.path.join('patches', 'cinder', ''))}


class TestCinderSpecs(unittest.TestCase):

    def setUp(self):
        self.specs = cinder_specs()
        self.assertTrue(self.specs, 'no spec under specs/cinder/')

    def read(self, path):
        with open(path, encoding='utf-8', newline='') as f:
            return f.read()

    def test_titles(self):
        for path in self.specs:
            sections = nova_checks.get_sections(
                nova_checks.parse(self.read(path)))
            with self.subTest(spec=path):
                self.assertEqual(
                    [], nova_checks.title_problems(CINDER_TITLES, sections))
                self.assertEqual(len(CINDER_TITLES), len(sections))

    def test_lines_and_rst(self):
        for path in self.specs:
            raw = self.read(path)
            with self.subTest(spec=path):
                self.assertEqual([], line_problems(raw))
                self.assertEqual([], nova_checks.rst_problems(raw))

    def test_blueprint_url_matches_file_name(self):
        for path in self.specs:
            name = os.path.basename(path)[:-len('.rst')]
            with self.subTest(spec=path):
                self.assertIn(BLUEPRINT_URL + name + '\n', self.read(path))

    @unittest.skipUnless(os.path.isdir(nova_checks.PATCHES_DIR),
                         'no patches/ here')
    def test_change_ids_are_the_cinder_series(self):
        listed = set()
        for path in self.specs:
            listed.update(nova_checks.CHANGE_ID.findall(self.read(path)))
        self.assertTrue(cinder_change_ids())
        self.assertEqual(cinder_change_ids(), listed)


class TestCinderChecksCatchBadSpecs(unittest.TestCase):

    def problems(self, sections):
        return nova_checks.title_problems(
            CINDER_TITLES, nova_checks.get_sections(nova_checks.parse(
                nova_checks.make_spec(sections))))

    def test_the_template_passes(self):
        self.assertEqual([], self.problems(list(CINDER_TITLES.items())))

    def test_a_missing_section_fails(self):
        sections = [x for x in CINDER_TITLES.items() if x[0] != 'Use Cases']
        self.assertEqual(["Missing sections: ['Use Cases']"],
                         self.problems(sections))

    def test_a_missing_subsection_fails(self):
        sections = [(name, [x for x in subtitles
                            if x != 'Active/Active HA impact'])
                    for name, subtitles in CINDER_TITLES.items()]
        self.assertEqual(["Section 'Proposed change' is missing "
                          "subsections: ['Active/Active HA impact']"],
                         self.problems(sections))

    def test_long_lines_fail_unless_they_hold_a_url(self):
        self.assertEqual(['line 1: 80 characters'], line_problems('x' * 80))
        self.assertEqual([], line_problems('see https://' + 'x' * 80))
        self.assertEqual(['line 1: trailing whitespace'],
                         line_problems('text '))
