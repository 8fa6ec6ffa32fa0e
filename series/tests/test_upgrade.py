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


class SeriesStateTest(unittest.TestCase):
    """Back on the series: the columns, the alembic head, version 75."""

    def state(self, **changes):
        columns = {'mae_nova.block_device_mapping': True,
                   'mae_nova.shadow_block_device_mapping': True}
        state = {'attach_mode columns': columns,
                 'alembic': 'head',
                 'compute versions': {host.name: 75
                                      for host in upgrade.hosts.HOSTS}}
        state.update(changes)
        return upgrade.series_problems(state, 'head')

    def test_the_series_passes(self):
        self.assertEqual([], self.state())

    def test_a_missing_column_fails(self):
        self.assertEqual(['mae_nova.block_device_mapping has no attach_mode'],
                         self.state(**{'attach_mode columns': {
                             'mae_nova.block_device_mapping': False}}))

    def test_the_pristine_head_fails(self):
        self.assertEqual(["alembic head ab450ba04102, not the series' head"],
                         self.state(alembic='ab450ba04102'))

    def test_a_compute_left_at_74_fails(self):
        versions = {host.name: 75 for host in upgrade.hosts.HOSTS}
        versions[upgrade.HOST_B.name] = 74
        [problem] = self.state(**{'compute versions': versions})
        self.assertIn('nova-compute service versions', problem)
