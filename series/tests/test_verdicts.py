"""Every verdict of the tool has a mutant in mutants.toml, so that a new
verdict without one fails here.

A verdict is a call of check() in series/cloud/, an ``if`` (or a
comprehension's filter) of a function there whose name ends in
``problems``, and an ``if`` of series.suites' judge() and not_passed().
It has a mutant when a tools mutant's text, found in its file, covers
one of its lines (of an ``if``: its condition or its body, which the
functions judged keep to a statement or two); or it is in UNMUTATED,
with the reason.
"""

import ast
import unittest

from series import mutants
from series.tests.base import REPOSITORY

CLOUD = 'series/cloud'
SUITES = 'series/suites.py'
SUITE_VERDICTS = ('judge', 'not_passed')

# (file, the verdict's first line, stripped): why it has no mutant.
UNMUTATED = {
    ('series/cloud/faults.py',
     "check(False, f'no live migration could be slowed down in "
     "{ATTEMPTS} '"): (
         'unconditional: reached only when every attempt ended before it '
         'was slowed down; there is no condition to remove'),
    ('series/cloud/upgrade.py', "if not entry['pid']:"): (
        "words a problem that the filter `entry['runs'] != "
        "entry['should']` decided (its mutant: "
        'tools-upgrade-running-problems-release-unchecked)'),
    ('series/cloud/upgrade.py', "if entry['runs'] is None:"): (
        "words a problem that the filter `entry['runs'] != "
        "entry['should']` decided"),
    ('series/suites.py', 'if listed is None:'): (
        'chooses how the results are read (with the ids selected or '
        'without), not whether the run passed'),
}


def decisions(path, source):
    """[(first line, last line, the first line's text)] of the verdicts
    in the module at `path` (relative to the repository).
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    nodes = []
    if path == SUITES:
        for function in ast.walk(tree):
            if (isinstance(function, ast.FunctionDef) and
                    function.name in SUITE_VERDICTS):
                nodes += conditions(function)
    else:
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and
                    isinstance(node.func, ast.Name) and
                    node.func.id == 'check'):
                nodes.append(node)
            elif (isinstance(node, ast.FunctionDef) and
                    node.name.endswith('problems')):
                nodes += conditions(node)
    return [(node.lineno, node.end_lineno,
             lines[node.lineno - 1].strip()) for node in nodes]


class Decision:
    """The lines of an if's condition and of its body."""

    def __init__(self, statement):
        self.lineno = statement.test.lineno
        self.end_lineno = statement.body[-1].end_lineno


def conditions(function):
    """The tests of the ifs and comprehension filters in `function`."""
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.If):
            found.append(Decision(node))
        elif isinstance(node, ast.comprehension):
            found += node.ifs
    return found


def mutated_lines(path, source, catalogue):
    """[(first line, last line)] of the tools mutants' texts in `path`."""
    spans = []
    for entry in catalogue:
        if entry.project == mutants.TOOLS and entry.file == path:
            at = source.find(entry.find)
            if at >= 0:
                first = source.count('\n', 0, at) + 1
                spans.append((first, first + entry.find.count('\n')))
    return spans


def unmutated(catalogue):
    """[(file, line, text)] of the verdicts without a mutant."""
    paths = sorted(str(path.relative_to(REPOSITORY)) for path in
                   (REPOSITORY / CLOUD).glob('*.py')) + [SUITES]
    missing = []
    for path in paths:
        source = (REPOSITORY / path).read_text()
        spans = mutated_lines(path, source, catalogue)
        for first, last, text in decisions(path, source):
            if not any(start <= last and end >= first
                       for start, end in spans):
                missing.append((path, first, text))
    return missing


class VerdictsTest(unittest.TestCase):

    def test_every_verdict_has_a_mutant(self):
        missing = [f'{path}:{line}: {text}'
                   for path, line, text in unmutated(mutants.load())
                   if (path, text) not in UNMUTATED]
        self.assertEqual([], missing)

    def test_every_exception_is_still_a_verdict_without_a_mutant(self):
        left = {(path, text) for path, _, text in unmutated(mutants.load())}
        self.assertEqual(set(), set(UNMUTATED) - left)

    def test_a_verdict_without_its_mutant_is_found(self):
        catalogue = [entry for entry in mutants.load()
                     if entry.name != 'tools-steps-ledger-problems-pass']
        self.assertIn(('series/cloud/steps.py',
                       "check(not problems, 'the ledger: ' + "
                       "'; '.join(problems))"),
                      [(path, text) for path, _, text in
                       unmutated(catalogue)])


if __name__ == '__main__':
    unittest.main()
