"""Tests of series.cloud.steps: a step passes only if the ledger agrees
with the cloud, unless it is not reconciled; its entry in the report.
"""

import unittest
from unittest import mock

from series.cloud.client import Failed
from series.cloud import steps
from series.cloud.tracker import Tracker


class ReconcileTest(unittest.TestCase):
    """A step passes only if the ledger agrees with the cloud."""

    def tracker(self):
        made = Tracker(cloud=mock.Mock())
        made.cloud.servers.return_value = []
        made.ledger.place('s1', 'mae-compute-a')
        return made

    def run_step(self, seen):
        made = self.tracker()
        with mock.patch.object(steps.ledger, 'observe',
                               return_value=seen), \
                mock.patch.object(steps, 'say'):
            passed = steps.run_step(made, steps.Step('a-step', 'a step', None),
                                    1, lambda: 'done')
        return passed, made.report.steps[-1]

    def seen(self, host):
        return {'servers': {'s1': host}, 'nova': [], 'cinder': [],
                'domains': {host: ['s1']}}

    def test_agreeing_cloud_passes_and_is_reported(self):
        passed, entry = self.run_step(self.seen('mae-compute-a'))
        self.assertTrue(passed)
        self.assertEqual({'s1': 'mae-compute-a'},
                         entry['expected']['servers'])
        self.assertEqual(self.seen('mae-compute-a'), entry['seen'])

    def test_disagreeing_cloud_fails_the_step(self):
        passed, entry = self.run_step(self.seen('mae-compute-b'))
        self.assertFalse(passed)
        self.assertIn('server s1 is on mae-compute-b', entry['detail'])

    def test_a_step_not_reconciled(self):
        made = self.tracker()
        with mock.patch.object(steps.ledger, 'observe') as observe, \
                mock.patch.object(steps, 'say'):
            self.assertTrue(steps.run_step(
                made, steps.Step('tempest', 'tempest', None,
                                 reconcile=False), 1, lambda: 'done'))
        observe.assert_not_called()


class EntryTest(unittest.TestCase):
    """The step's entry: its number, the detail or the failure, each
    server's host before and after it.
    """

    def run_step(self, function):
        made = Tracker(cloud=mock.Mock())
        made.servers = ['s1']
        made.cloud.servers.side_effect = [
            [{'id': 's1', 'OS-EXT-SRV-ATTR:host': 'mae-compute-a'}],
            [{'id': 's1', 'OS-EXT-SRV-ATTR:host': 'mae-compute-b'}]]
        with mock.patch.object(steps, 'say'):
            passed = steps.run_step(
                made, steps.Step('a-move', 'a move', None, reconcile=False),
                5, function)
        return passed, made

    def test_a_passed_step(self):
        passed, made = self.run_step(lambda: 'moved')
        [entry] = made.report.steps
        self.assertTrue(passed)
        self.assertEqual('a-move', made.current_step)
        self.assertEqual({'step': 'a-move', 'number': 5, 'title': 'a move',
                          'passed': True,
                          'detail': 'moved',
                          'hosts': {'s1': ['mae-compute-a',
                                           'mae-compute-b']}},
                         {key: value for key, value in entry.items()
                          if key != 'seconds'})

    def test_a_failure_is_the_detail(self):
        def fails():
            raise Failed('ro server on mae-compute-b')
        passed, made = self.run_step(fails)
        self.assertFalse(passed)
        self.assertEqual('Failed: ro server on mae-compute-b',
                         made.report.steps[0]['detail'])

    def test_another_error_is_raised(self):
        def breaks():
            raise KeyError('volumeId')
        with self.assertRaises(KeyError):
            self.run_step(breaks)


class RunTableTest(unittest.TestCase):
    """Each step of a table in order, by number; a step whose `needs`
    did not pass is entered as failed without running.
    """

    def test_a_step_needing_a_failed_one_is_not_run(self):
        made = Tracker(cloud=mock.Mock())
        table = (steps.Step('first', 'one', 'fails'),
                 steps.Step('second', 'two', 'runs'),
                 steps.Step('third', 'three', 'skipped', needs='first'),
                 steps.Step('fourth', 'four', 'runs', needs='second'))
        ran = []

        def run_step(tracker, step, number, function):
            ran.append((number, function))
            return function == 'runs'
        with mock.patch.object(steps, 'run_step', run_step), \
                mock.patch.object(steps, 'say'):
            steps.run_table(made, table, lambda step: step.function)
        self.assertEqual([(1, 'fails'), (2, 'runs'), (4, 'runs')], ran)
        self.assertEqual([{'step': 'third', 'number': 3, 'title': 'three',
                           'passed': False, 'detail': 'not run: it needs '
                           'first, which did not pass', 'seconds': 0.0,
                           'hosts': {}}], made.report.steps)


if __name__ == '__main__':
    unittest.main()
