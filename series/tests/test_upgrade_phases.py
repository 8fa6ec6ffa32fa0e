"""Tests of series.cloud.upgrade_phases that need no cloud: a refusal
passes only as the series makes it, and is recorded; a started
nova-compute is waited for until it reports.
"""

import json
import time
import unittest
from unittest import mock

from series.cloud import client
from series.cloud import databases
from series.cloud import rest
from series.cloud import services
from series.cloud.tracker import Tracker
from series.cloud.tracker import UpgradeReport
from series.cloud import upgrade_phases


def reply(status, message):
    return rest.Response(status, {}, json.dumps(
        {'conflictingRequest': {'code': status, 'message': message}}))


class RefusedTest(unittest.TestCase):

    def setUp(self):
        self.tracker = Tracker(None, UpgradeReport())
        self.tracker.current_step = 3

    def test_the_series_refusal_passes_and_is_recorded(self):
        self.assertEqual('ro attach: 409', upgrade_phases.refused(
            self.tracker, 'ro attach',
            reply(409, upgrade_phases.NOT_YET_UPGRADED)))
        self.assertEqual(
            [{'phase': 3, 'request': 'ro attach', 'status': 409,
              'body': {'conflictingRequest': {
                  'code': 409, 'message': upgrade_phases.NOT_YET_UPGRADED}}}],
            self.tracker.report.refusals)

    def test_another_409_fails(self):
        locked = reply(409, 'Instance abc is locked')
        with self.assertRaisesRegex(client.Failed, 'is locked'):
            upgrade_phases.refused(self.tracker, 'ro attach', locked)

    def test_another_status_fails(self):
        with self.assertRaises(client.Failed):
            upgrade_phases.refused(self.tracker, 'ro attach',
                                   reply(400, upgrade_phases.NOT_YET_UPGRADED))


class StartServicesTest(unittest.TestCase):

    def test_a_started_compute_is_waited_for_until_it_reports(self):
        # Read after the stop, then while it starts: the third read is its
        # first report since.
        counts = [{'mae-compute-a': 5, 'mae-compute-b': 7},
                  {'mae-compute-a': 5, 'mae-compute-b': 7},
                  {'mae-compute-a': 6, 'mae-compute-b': 8}]
        with mock.patch.object(databases, 'report_counts',
                               side_effect=counts) as report_counts, \
                mock.patch.object(services, 'start') as start, \
                mock.patch.object(time, 'sleep'):
            upgrade_phases.start_services(
                ['nova-conductor', 'nova-compute-b'], admin=None)
        self.assertEqual(['nova-conductor', 'nova-compute-b'],
                         [call.args[0].name for call in start.call_args_list])
        self.assertEqual(3, report_counts.call_count)


if __name__ == '__main__':
    unittest.main()
