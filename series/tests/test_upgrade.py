"""Tests of series.cloud.upgrade that need no cloud."""

import json
import unittest
from unittest import mock

from series.cloud import api
from series.cloud import client
from series.cloud import releases
from series.cloud import upgrade
from series import config
from series.tests import base


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


class UpgradeTest(unittest.TestCase):

    def test_the_rollback_runs_the_sql_the_packagers_page_gives(self):
        page = ' '.join((config.ROOT / 'doc/source/packagers.rst')
                        .read_text().split())
        for sql in (upgrade.ROLLBACK_SQL, upgrade.API_ROLLBACK_SQL,
                    upgrade.READ_ONLY_BDMS.replace('SELECT ', '')):
            self.assertIn(' '.join(sql.split()), page)

    def test_a_started_compute_is_waited_for_until_it_reports(self):
        # Read after the stop, then while it starts: the third read is its
        # first report since.
        counts = [{'mae-compute-a': 5, 'mae-compute-b': 7},
                  {'mae-compute-a': 5, 'mae-compute-b': 7},
                  {'mae-compute-a': 6, 'mae-compute-b': 8}]
        with mock.patch.object(upgrade, 'report_counts',
                               side_effect=counts) as report_counts, \
                mock.patch.object(upgrade.services, 'start') as start, \
                mock.patch.object(upgrade.time, 'sleep'):
            upgrade.start_services(['nova-conductor', 'nova-compute-b'],
                                   admin=None)
        self.assertEqual(['nova-conductor', 'nova-compute-b'],
                         [call.args[0].name for call in start.call_args_list])
        self.assertEqual(3, report_counts.call_count)

    def test_query_rows_with_nulls(self):
        with mock.patch.object(upgrade.process, 'run') as run:
            run.return_value.stdout = 'a\tNULL\nb\t75\n'
            self.assertEqual([['a', None], ['b', '75']],
                             upgrade.query('mae_nova', 'SELECT 1'))
        self.assertEqual(['mariadb', '--protocol=socket', '-u', 'root', '-N',
                          '-B', '-e', 'SELECT 1', 'mae_nova'],
                         run.call_args.args[0])


SERIES_STATE = {
    'attach_mode columns': {'mae_nova.block_device_mapping': True},
    'alembic': 'head',
    'compute versions': {'mae-compute-a': 75, 'mae-compute-b': 75}}


class BackOnTheSeriesTest(base.RootTestCase):

    def test_back_on_the_series_switches_every_part_then_starts(self):
        for part in (releases.CONTROL, 'mae-compute-a', 'mae-compute-b'):
            releases.set_release(part, releases.PRISTINE)
        seen = []
        with mock.patch.object(upgrade.services, 'stop_all') as stop_all, \
                mock.patch.object(upgrade, 'sync_databases',
                                  lambda: seen.append(releases.current())), \
                mock.patch.object(upgrade, 'start_services') as start, \
                mock.patch.object(upgrade.deploy, 'admin_session'), \
                mock.patch.object(upgrade, 'series_state',
                                  return_value=SERIES_STATE):
            self.assertEqual(SERIES_STATE,
                             upgrade.back_on_the_series('head'))
        nova_and_cinder = ['cinder-api', 'nova-api', 'cinder-scheduler',
                           'cinder-volume', 'nova-conductor',
                           'nova-scheduler', 'nova-compute-a',
                           'nova-compute-b']
        self.assertEqual(nova_and_cinder, [
            service.name for service in stop_all.call_args.args[0]])
        self.assertEqual([{'control': 'series', 'mae-compute-a': 'series',
                           'mae-compute-b': 'series'}], seen)
        # Started in the cloud's order: the conductor before the computes.
        self.assertEqual(nova_and_cinder, start.call_args.args[0])

    def test_back_on_the_series_fails_on_a_state_not_of_the_series(self):
        with mock.patch.object(upgrade.services, 'stop_all'), \
                mock.patch.object(upgrade, 'sync_databases'), \
                mock.patch.object(upgrade, 'start_services'), \
                mock.patch.object(upgrade.deploy, 'admin_session'), \
                mock.patch.object(upgrade, 'series_state', return_value=dict(
                    SERIES_STATE, alembic='ab450ba04102')), \
                self.assertRaisesRegex(client.Failed, 'alembic head'):
            upgrade.back_on_the_series('head')


class RunningReleasesTest(unittest.TestCase):
    """Each running service must run the release of its part."""

    def entry(self, part, runs, should, pid=42):
        return {'part': part, 'pid': pid, 'runs': runs, 'should': should,
                'by': 'its environment'}

    def test_every_service_on_its_parts_release(self):
        running = {'nova-api': self.entry('control', 'pristine', 'pristine'),
                   'nova-compute-b': self.entry('mae-compute-b', 'series',
                                                'series')}
        self.assertEqual([], upgrade.running_problems(running))

    def test_a_service_left_on_the_old_release_fails(self):
        running = {'nova-compute-b': self.entry('mae-compute-b', 'pristine',
                                                'series')}
        self.assertEqual(['nova-compute-b runs pristine (its environment), '
                          'its part mae-compute-b series'],
                         upgrade.running_problems(running))

    def test_a_service_that_does_not_tell_fails(self):
        running = {'cinder-volume': self.entry('control', None, 'series')}
        self.assertEqual(['cinder-volume does not tell its release (its '
                          'environment)'], upgrade.running_problems(running))

    def test_a_service_not_running_fails(self):
        running = {'cinder-volume': self.entry('control', None, 'series',
                                               pid=None)}
        self.assertEqual(['cinder-volume is not running'],
                         upgrade.running_problems(running))

    def test_each_nova_and_cinder_service_has_its_part(self):
        parts = upgrade.service_parts()
        self.assertEqual('control', parts['nova-conductor'])
        self.assertEqual('control', parts['cinder-volume'])
        self.assertEqual('mae-compute-a', parts['nova-compute-a'])
        self.assertEqual('mae-compute-b', parts['nova-compute-b'])
        self.assertEqual(8, len(parts))

    def test_a_blanked_environment_is_read_from_the_written_version(self):
        written = {('nova-conductor', None): 74, ('nova-scheduler', None): 75,
                   ('nova-compute', 'mae-compute-a'): 75,
                   ('nova-compute', 'mae-compute-b'): 74}
        with mock.patch.object(upgrade.services.Service, 'pid',
                               return_value=42), \
                mock.patch.object(releases, 'running_release',
                                  return_value=None), \
                mock.patch.object(upgrade, 'written_versions',
                                  return_value=written):
            running = upgrade.running_releases()
        self.assertEqual('pristine', running['nova-conductor']['runs'])
        self.assertEqual('series', running['nova-scheduler']['runs'])
        self.assertEqual('pristine', running['nova-compute-b']['runs'])
        self.assertIn('(74)', running['nova-compute-b']['by'])
        # Cinder writes no Nova service version: nothing to tell by.
        self.assertIsNone(running['cinder-volume']['runs'])

    def test_a_phase_fails_when_a_service_runs_another_release(self):
        phases = upgrade.Upgrade.__new__(upgrade.Upgrade)
        phases.report = {'steps': [], 'versions': {}}
        phases.cloud = mock.Mock()
        phases.cloud.servers.return_value = []
        phases.servers = []
        phases.ledger = upgrade.scenario.ledger.Ledger()
        wrong = {'nova-api': self.entry('control', 'series', 'pristine')}
        with mock.patch.object(upgrade, 'running_releases',
                               return_value=wrong), \
                mock.patch.object(phases, 'versions', return_value={}):
            self.assertFalse(phases.phase(1, 'a phase', lambda: 'done'))
        self.assertIn('nova-api runs series', phases.report['steps'][0][
            'detail'])
        self.assertEqual(wrong, phases.report['running']['1'])
