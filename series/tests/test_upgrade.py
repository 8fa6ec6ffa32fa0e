"""Tests of series.cloud.upgrade that need no cloud."""

import json
import unittest

from series.cloud import api
from series.cloud import client
from series.cloud import upgrade


def reply(status, message):
    return api.Response(status, {}, json.dumps(
        {'conflictingRequest': {'code': status, 'message': message}}))


class RefusedTest(unittest.TestCase):

    def setUp(self):
        self.phases = upgrade.Upgrade.__new__(upgrade.Upgrade)
        self.phases.report = {'refusals': []}
        self.phases.current_step = 3

    def test_the_series_refusal_passes_and_is_recorded(self):
        self.assertEqual('ro attach: 409', self.phases.refused(
            'ro attach', reply(409, upgrade.NOT_YET_UPGRADED)))
        self.assertEqual(
            [{'phase': 3, 'request': 'ro attach', 'status': 409,
              'body': {'conflictingRequest': {
                  'code': 409, 'message': upgrade.NOT_YET_UPGRADED}}}],
            self.phases.report['refusals'])

    def test_another_409_fails(self):
        locked = reply(409, 'Instance abc is locked')
        with self.assertRaisesRegex(client.Failed, 'is locked'):
            self.phases.refused('ro attach', locked)

    def test_another_status_fails(self):
        with self.assertRaises(client.Failed):
            self.phases.refused('ro attach',
                                reply(400, upgrade.NOT_YET_UPGRADED))
