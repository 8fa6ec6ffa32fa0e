"""Run this repository's unit tests by id and print, as the last line of
standard output, JSON of {'imported': this file (of the series package
the tests import), 'results': {test id: status}, 'unloaded': [the ids
that did not import]}, with stestr's statuses ('success', 'fail',
'skip'): how `tools/series mutants` reads the runs of the tool mutants'
tests, which a mutant may break in any way.

    python3 -m series.test_ids series.tests.test_ledger.CompareTest ...
"""

import io
import json
import sys
import unittest

# The id unittest gives a name it could not import.
UNLOADED = 'unittest.loader._FailedTest.'


class StatusResult(unittest.TestResult):
    """Each test's status by its id."""

    def __init__(self):
        super().__init__()
        self.statuses = {}
        self.unloaded = []

    def addSuccess(self, test):
        self.statuses[test.id()] = 'success'

    def addFailure(self, test, err):
        self.statuses[test.id()] = 'fail'

    def addError(self, test, err):
        if test.id().startswith(UNLOADED):
            self.unloaded.append(test.id().removeprefix(UNLOADED))
        else:
            # An error in a class fixture has no test of its own: its id
            # names the fixture, as stestr's does.
            self.statuses[test.id()] = 'fail'

    def addSubTest(self, test, subtest, err):
        # A failed subtest fails its test, which then reports no outcome
        # of its own.
        if err is not None:
            self.statuses[test.id()] = 'fail'

    def addSkip(self, test, reason):
        self.statuses[test.id()] = 'skip'

    def addExpectedFailure(self, test, err):
        self.statuses[test.id()] = 'xfail'

    def addUnexpectedSuccess(self, test):
        self.statuses[test.id()] = 'fail'


def main(ids):
    """Run the tests `ids` names (modules, classes or methods), what they
    print kept off standard output.
    """
    result = StatusResult()
    suite = unittest.defaultTestLoader.loadTestsFromNames(ids)
    stdout, sys.stdout = sys.stdout, io.StringIO()
    try:
        suite.run(result)
    finally:
        sys.stdout = stdout
    print(json.dumps({'imported': __file__,
                      'results': result.statuses,
                      'unloaded': result.unloaded}))


if __name__ == '__main__':
    main(sys.argv[1:])
