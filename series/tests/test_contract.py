"""Tests of series.contract: the comparison of the contract runs."""

import unittest

from series import contract


class CompareContractTest(unittest.TestCase):

    EXPECTED = {'test_fixed': False, 'test_kept': True}
    DOCS = {'test_fixed': 'Fixed by the series.',
            'test_kept': 'Already right in the release.'}

    def compare(self, release, patched):
        return contract.compare_contract(self.EXPECTED, release, patched,
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
