"""Check the specs under specs/2027.1/ as nova-specs checks a spec.

nova-specs' tests/test_titles.py parses its release template and every
spec with docutils, builds a dict of each section title with the titles of
its subsections, and fails a spec that misses a section or subsection of
the template (History and Feature Liaison may be left out), that has a
section the template does not have (extra subsections are allowed), that
has a line over 79 characters, a carriage return, a zero width space or
trailing spaces.

This module applies the same rules to the specs under specs/2027.1/,
against the titles recorded from the nova-specs template in
specs/template-titles.json (record_template_titles.py writes it), and is
stricter on five points:

* the sections, and the template's subsections of each section, must come
  in the template's order (nova-specs does not check the order);
* no line may exceed 79 characters, URLs and literal blocks included
  (nova-specs lets those through), and no line may end in any whitespace;
* docutils must parse the spec without a warning or an error;
* the spec names its blueprint URL, which matches its file name, and the
  Change-Ids it lists are exactly those of the patch series in patches/;
* a spec has at most MAX_SPEC_LINES lines: what nova-specs reviewers read,
  with implementation mechanics left to the commit messages.

Run from the repository root with the Python of Nova's virtualenv (it has
docutils; nothing else beyond the standard library is used):

    .work/venvs/nova/bin/python -m unittest discover -s specs/tests -t .

`python -m specs.tests.record_template_titles --check --repo <nova-specs
git directory>` checks that the recorded titles are still those of the
template at the recorded commit.
"""

import contextlib
import glob
import io
import json
import os
import re
import unittest

import docutils.core

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SPECS_DIR = os.path.join(ROOT, 'specs')
RELEASE = '2027.1'
TITLES_FILE = os.path.join(SPECS_DIR, 'template-titles.json')
PATCHES_DIR = os.path.join(ROOT, 'patches')

# As in nova-specs' tests/test_titles.py.
OPTIONAL_SECTIONS = ('History',)
OPTIONAL_SUBSECTIONS = ('Feature Liaison',)
MAX_LINE_LENGTH = 79
MAX_SPEC_LINES = 700

BLUEPRINT_URL = 'https://blueprints.launchpad.net/nova/+spec/'
CHANGE_ID = re.compile(r'\bI[0-9a-f]{40}\b')
CHANGE_ID_TRAILER = re.compile(r'^Change-Id: (I[0-9a-f]{40})$', re.MULTILINE)


def parse(text):
    """Parse reStructuredText as nova-specs does: publish_doctree(text).

    docutils reports problems on the standard error stream; they are
    silenced here (rst_problems() collects them), which does not change
    the tree.
    """
    with contextlib.redirect_stderr(io.StringIO()):
        return docutils.core.publish_doctree(text)


def _get_title(section_tree):
    """nova-specs' TestTitles._get_title."""
    section = {
        'subtitles': [],
    }
    for node in section_tree:
        if node.tagname == 'title':
            section['name'] = node.rawsource
        elif node.tagname == 'section':
            subsection = _get_title(node)
            section['subtitles'].append(subsection['name'])
    return section


def get_sections(doctree):
    """[(section title, [subsection titles])] in document order.

    The pairs nova-specs' TestTitles._get_titles puts in its dict, kept as
    a list so that order and repeated titles can be checked.
    """
    sections = []
    for node in doctree:
        if node.tagname == 'section':
            # Note subsection subtitles are thrown away
            section = _get_title(node)
            sections.append((section['name'], section['subtitles']))
    return sections


def get_titles(doctree):
    """nova-specs' TestTitles._get_titles: {title: [subsection titles]}."""
    return dict(get_sections(doctree))


def _out_of_order(expected, actual):
    """The items of actual that expected also has, when they are not in the
    order of expected; None when they are.
    """
    common = [x for x in actual if x in expected]
    wanted = [x for x in expected if x in common]
    return common if common != wanted else None


def title_problems(expect, sections):
    """What is wrong with a spec's titles, as a list of messages.

    :param expect: the template's titles, {title: [subsection titles]},
        in the template's order
    :param sections: the spec's get_sections()
    """
    actual = dict(sections)
    msgs = []
    # The checks of nova-specs' TestTitles._check_titles.
    missing_sections = [x for x in expect if x not in actual and
                        x not in OPTIONAL_SECTIONS]
    extra_sections = [x for x in actual if x not in expect]
    if missing_sections:
        msgs.append('Missing sections: %s' % missing_sections)
    if extra_sections:
        msgs.append('Extra sections: %s' % extra_sections)
    for section in expect:
        missing_subsections = [x for x in expect[section]
                               if x not in actual.get(section, []) and
                               x not in OPTIONAL_SUBSECTIONS]
        # extra subsections are allowed
        if missing_subsections:
            msgs.append("Section '%s' is missing subsections: %s"
                        % (section, missing_subsections))
    # Stricter than nova-specs: no title twice, the template's order.
    names = [name for name, _ in sections]
    repeated = sorted({x for x in names if names.count(x) > 1})
    if repeated:
        msgs.append('Repeated sections: %s' % repeated)
    order = _out_of_order(list(expect), names)
    if order:
        msgs.append('Sections out of the template order: %s (template: %s)'
                    % (order, [x for x in expect if x in order]))
    for name, subtitles in sections:
        if name not in expect:
            continue
        repeated = sorted({x for x in subtitles if x in expect[name] and
                           subtitles.count(x) > 1})
        if repeated:
            msgs.append("Section '%s' repeats subsections: %s"
                        % (name, repeated))
        order = _out_of_order(expect[name], subtitles)
        if order:
            msgs.append("Section '%s' has subsections out of the template "
                        "order: %s (template: %s)"
                        % (name, order,
                           [x for x in expect[name] if x in order]))
    return msgs


def line_problems(raw):
    """Lines over 79 characters, trailing whitespace, carriage returns and
    zero width spaces, as a list of messages.
    """
    msgs = []
    if '\r' in raw:
        msgs.append('%d literal carriage returns' % raw.count('\r'))
    if '\u200b' in raw:
        msgs.append('zero width space characters')
    for number, line in enumerate(raw.split('\n'), 1):
        if len(line) > MAX_LINE_LENGTH:
            msgs.append('line %d: %d characters (at most %d)'
                        % (number, len(line), MAX_LINE_LENGTH))
        if line != line.rstrip():
            msgs.append('line %d: trailing whitespace' % number)
    return msgs


def rst_problems(raw):
    """The warnings and errors docutils reports for a document."""
    stream = io.StringIO()
    docutils.core.publish_doctree(
        raw, settings_overrides={'warning_stream': stream,
                                 'report_level': 2})
    return [line for line in stream.getvalue().splitlines() if line]


def load_recorded_titles():
    with open(TITLES_FILE, encoding='utf-8') as f:
        return json.load(f)


def series_change_ids():
    """{Change-Id: patch file} of every patch of the series in patches/."""
    change_ids = {}
    for path in sorted(glob.glob(os.path.join(PATCHES_DIR, '*', '*.patch'))):
        with open(path, encoding='utf-8') as f:
            # The commit message ends at the first '---' line.
            message = f.read().split('\n---\n', 1)[0]
        for change_id in CHANGE_ID_TRAILER.findall(message):
            change_ids[change_id] = os.path.relpath(path, ROOT)
    return change_ids


def release_specs():
    """Every file under specs/<RELEASE>/, at any depth."""
    return sorted(
        path for path in glob.glob(
            os.path.join(SPECS_DIR, RELEASE, '**', '*'), recursive=True)
        if os.path.isfile(path))


def make_spec(titles, title='Example', blueprint='example'):
    """A minimal spec with the given sections and subsections, in order.

    :param titles: [(section title, [subsection titles])]
    """
    lines = ['=' * len(title), title, '=' * len(title), '',
             BLUEPRINT_URL + blueprint, '']
    for name, subtitles in titles:
        lines += [name, '=' * len(name), '', 'None', '']
        for subtitle in subtitles:
            lines += [subtitle, '-' * len(subtitle), '', 'None', '']
    return '\n'.join(lines)


class TestRecordedTitles(unittest.TestCase):

    def test_recorded_titles(self):
        recorded = load_recorded_titles()
        self.assertEqual('openstack/nova-specs', recorded['repository'])
        self.assertEqual('specs/%s-template.rst' % RELEASE,
                         recorded['template'])
        self.assertRegex(recorded['commit'], r'^[0-9a-f]{40}$')
        titles = recorded['titles']
        self.assertIn('Proposed change', titles)
        self.assertTrue(all(isinstance(subtitles, list)
                            for subtitles in titles.values()))


class TestSpecs(unittest.TestCase):
    """Every spec under specs/2027.1/, as nova-specs checks a spec."""

    def setUp(self):
        self.expect = load_recorded_titles()['titles']
        self.specs = release_specs()

    def test_there_are_specs(self):
        self.assertTrue(self.specs, 'no spec under specs/%s/' % RELEASE)

    def test_rst_extension(self):
        for path in self.specs:
            self.assertTrue(path.endswith('.rst'),
                            "spec %s must use 'rst' extension" % path)

    def test_titles(self):
        for path in self.specs:
            with open(path, encoding='utf-8') as f:
                sections = get_sections(parse(f.read()))
            with self.subTest(spec=path):
                self.assertEqual(
                    [], title_problems(self.expect, sections),
                    'while checking %s' % path)

    def test_lines(self):
        for path in self.specs:
            with open(path, encoding='utf-8', newline='') as f:
                raw = f.read()
            with self.subTest(spec=path):
                self.assertEqual([], line_problems(raw),
                                 'while checking %s' % path)

    def test_length(self):
        for path in self.specs:
            with open(path, encoding='utf-8') as f:
                count = len(f.read().splitlines())
            with self.subTest(spec=path):
                self.assertLessEqual(count, MAX_SPEC_LINES,
                                     '%s has %d lines' % (path, count))

    def test_valid_rst(self):
        for path in self.specs:
            with open(path, encoding='utf-8') as f:
                raw = f.read()
            with self.subTest(spec=path):
                self.assertEqual([], rst_problems(raw),
                                 'while checking %s' % path)

    def test_blueprint_url_matches_file_name(self):
        for path in self.specs:
            name = os.path.basename(path)[:-len('.rst')]
            with open(path, encoding='utf-8') as f:
                raw = f.read()
            with self.subTest(spec=path):
                self.assertIn(BLUEPRINT_URL + name, raw)


class TestSeriesChangeIds(unittest.TestCase):
    """The spec links each patch of the series by its Change-Id."""

    SPEC = os.path.join(SPECS_DIR, RELEASE,
                        'volume-multiattach-enhancements.rst')

    @unittest.skipUnless(os.path.isdir(PATCHES_DIR), 'no patches/ here')
    def test_change_ids_are_the_series(self):
        with open(self.SPEC, encoding='utf-8') as f:
            listed = CHANGE_ID.findall(f.read())
        expected = series_change_ids()
        self.assertTrue(expected)
        self.assertEqual([], [x for x in listed if listed.count(x) > 1],
                         'Change-Ids listed twice')
        self.assertEqual(sorted(expected), sorted(listed),
                         'missing: %s; unknown: %s' % (
                             {x: expected[x] for x in expected
                              if x not in listed},
                             [x for x in listed if x not in expected]))


class TestChecksCatchBadSpecs(unittest.TestCase):
    """The checks above fail the specs they must fail."""

    def setUp(self):
        self.expect = load_recorded_titles()['titles']
        self.template_order = list(self.expect.items())

    def problems(self, sections):
        return title_problems(self.expect, get_sections(parse(
            make_spec(sections))))

    def test_template_order_passes(self):
        self.assertEqual([], self.problems(self.template_order))
        self.assertEqual([], line_problems(make_spec(self.template_order)))
        self.assertEqual([], rst_problems(make_spec(self.template_order)))

    def test_optional_sections_may_be_left_out(self):
        sections = [(name, [x for x in subtitles
                            if x not in OPTIONAL_SUBSECTIONS])
                    for name, subtitles in self.template_order
                    if name not in OPTIONAL_SECTIONS]
        self.assertEqual([], self.problems(sections))

    def test_extra_subsections_are_allowed(self):
        sections = [(name, ['Overview'] + subtitles)
                    for name, subtitles in self.template_order]
        self.assertEqual([], self.problems(sections))

    def test_missing_section(self):
        sections = [x for x in self.template_order if x[0] != 'Testing']
        self.assertEqual(["Missing sections: ['Testing']"],
                         self.problems(sections))

    def test_sections_out_of_order(self):
        sections = list(self.template_order)
        names = [name for name, _ in sections]
        first, second = (names.index('Dependencies'),
                         names.index('Testing'))
        sections[first], sections[second] = sections[second], sections[first]
        problems = self.problems(sections)
        self.assertEqual(1, len(problems), problems)
        self.assertIn('Sections out of the template order', problems[0])
        self.assertIn("'Testing', 'Dependencies'", problems[0])

    def test_missing_subsection(self):
        sections = [(name, [x for x in subtitles if x != 'Security impact'])
                    for name, subtitles in self.template_order]
        self.assertEqual(["Section 'Proposed change' is missing subsections: "
                          "['Security impact']"], self.problems(sections))

    def test_subsections_out_of_order(self):
        sections = [(name, list(reversed(subtitles)))
                    if name == 'Implementation' else (name, subtitles)
                    for name, subtitles in self.template_order]
        problems = self.problems(sections)
        self.assertEqual(1, len(problems), problems)
        self.assertIn("Section 'Implementation' has subsections out of the "
                      "template order", problems[0])

    def test_subsection_promoted_to_section(self):
        # A template subsection at the wrong heading level is both an extra
        # section and a missing subsection.
        sections = []
        for name, subtitles in self.template_order:
            if name == 'Proposed change':
                sections.append(
                    (name, [x for x in subtitles if x != 'Upgrade impact']))
                sections.append(('Upgrade impact', []))
            else:
                sections.append((name, subtitles))
        self.assertEqual(
            ["Extra sections: ['Upgrade impact']",
             "Section 'Proposed change' is missing subsections: "
             "['Upgrade impact']"], self.problems(sections))

    def test_extra_and_repeated_sections(self):
        sections = self.template_order + [('Appendix', []),
                                          self.template_order[0]]
        problems = self.problems(sections)
        self.assertIn("Extra sections: ['Appendix']", problems)
        self.assertIn("Repeated sections: ['%s']" % self.template_order[0][0],
                      problems)

    def test_line_checks(self):
        text = make_spec(self.template_order).replace(
            '\nNone\n', '\nNone  \n', 1) + 'x' * 80 + '\nend\r\n\u200b\n'
        problems = line_problems(text)
        self.assertTrue(any('trailing whitespace' in x for x in problems))
        self.assertTrue(any('80 characters' in x for x in problems))
        self.assertIn('1 literal carriage returns', problems)
        self.assertIn('zero width space characters', problems)

    def test_invalid_rst(self):
        text = make_spec(self.template_order) + '\nBad\n==\n\n`unclosed\n'
        self.assertTrue(rst_problems(text))


if __name__ == '__main__':
    unittest.main()
