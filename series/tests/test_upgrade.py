"""Tests of series.cloud.upgrade that need no cloud: back on the series,
every part switched before the services start; each running service
must run the release of its part, or the phase fails.
"""

import unittest
from unittest import mock

from series.cloud import client
from series.cloud import databases
from series.cloud import releases
from series.cloud import steps
from series.cloud.tracker import Tracker
from series.cloud.tracker import UpgradeReport
from series.cloud import upgrade
from series.cloud import upgrade_phases
from series.tests import base


SERIES_STATE = {
    'attach_mode columns': {'mae_nova.block_device_mapping': True},
    'alembic': 'head',
    'compute versions': {'mae-compute-a': 76, 'mae-compute-b': 76}}


class RunTest(base.RootTestCase):
    """The upgrade's run: the cloud back on the series only once every
    phase passed, and the report's verdict with it.
    """

    def run_upgrade(self, *passed):
        report = UpgradeReport(steps=[
            {'step': f'phase-{number}', 'number': number, 'passed': ok,
             'title': f'phase {number}',
             'detail': '', 'seconds': 1.0, 'hosts': {}}
            for number, ok in enumerate(passed, 1)],
            database={'upgrade': {'alembic': 'head'}})
        (self.root / '.work' / 'cloud').mkdir(parents=True)
        with mock.patch.object(upgrade, 'start_pristine'), \
                mock.patch.object(upgrade, 'Cloud'), \
                mock.patch.object(upgrade, 'run_phases',
                                  return_value=report), \
                mock.patch.object(upgrade, 'back_on_the_series',
                                  return_value={'state': 'series'}) as back, \
                mock.patch.object(upgrade.process, 'say'):
            self.assertIs(report, upgrade.run())
        return report, back

    def test_every_phase_passed_puts_the_cloud_back_on_the_series(self):
        report, back = self.run_upgrade(True, True)
        back.assert_called_once_with('head')
        self.assertEqual(('ok', {'state': 'series'}, []),
                         (report.series_again, report.series_state,
                          report.failures()))
        self.assertTrue(report.passed())

    def test_a_failed_phase_leaves_the_cloud_as_it_is(self):
        report, back = self.run_upgrade(True, False)
        back.assert_not_called()
        self.assertEqual('not tried: a phase failed', report.series_again)
        self.assertFalse(report.passed())


class BackOnTheSeriesTest(base.RootTestCase):

    def test_back_on_the_series_switches_every_part_then_starts(self):
        for part in (releases.CONTROL, 'mae-compute-a', 'mae-compute-b'):
            releases.set_release(part, releases.PRISTINE)
        seen = []
        with mock.patch.object(upgrade.services, 'stop_all') as stop_all, \
                mock.patch.object(databases, 'sync_databases',
                                  lambda: seen.append(releases.current())), \
                mock.patch.object(upgrade_phases, 'start_services') as start, \
                mock.patch.object(upgrade.rest, 'admin_session'), \
                mock.patch.object(databases, 'compute_versions',
                                  lambda wanted: seen.append(wanted)), \
                mock.patch.object(databases, 'series_state',
                                  lambda: seen.append('state') or
                                  SERIES_STATE):
            self.assertEqual(SERIES_STATE,
                             upgrade.back_on_the_series('head'))
        nova_and_cinder = ['cinder-api', 'nova-api', 'cinder-scheduler',
                           'cinder-volume', 'nova-conductor',
                           'nova-scheduler', 'nova-compute-a',
                           'nova-compute-b']
        self.assertEqual(nova_and_cinder, [
            service.name for service in stop_all.call_args.args[0]])
        # The releases switched before the sync; the state read once each
        # nova-compute has written the series' service version.
        self.assertEqual([{'control': 'series', 'mae-compute-a': 'series',
                           'mae-compute-b': 'series'},
                          {'mae-compute-a': 76, 'mae-compute-b': 76},
                          'state'], seen)
        # Started in the cloud's order: the conductor before the computes.
        self.assertEqual(nova_and_cinder, start.call_args.args[0])

    def test_back_on_the_series_fails_on_a_state_not_of_the_series(self):
        with mock.patch.object(upgrade.services, 'stop_all'), \
                mock.patch.object(databases, 'sync_databases'), \
                mock.patch.object(upgrade_phases, 'start_services'), \
                mock.patch.object(databases, 'compute_versions'), \
                mock.patch.object(upgrade.rest, 'admin_session'), \
                mock.patch.object(databases, 'series_state', return_value=dict(
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
        written = {('nova-conductor', None): 74, ('nova-scheduler', None): 76,
                   ('nova-compute', 'mae-compute-a'): 76,
                   ('nova-compute', 'mae-compute-b'): 74}
        with mock.patch.object(upgrade.services.Service, 'pid',
                               return_value=42), \
                mock.patch.object(releases, 'running_release',
                                  return_value=None), \
                mock.patch.object(databases, 'written_versions',
                                  return_value=written):
            running = upgrade.running_releases()
        self.assertEqual('pristine', running['nova-conductor']['runs'])
        self.assertEqual('series', running['nova-scheduler']['runs'])
        self.assertEqual('pristine', running['nova-compute-b']['runs'])
        self.assertIn('(74)', running['nova-compute-b']['by'])
        # Cinder writes no Nova service version: nothing to tell by.
        self.assertIsNone(running['cinder-volume']['runs'])

    def run_phase(self, running, seen=None):
        """One phase whose ledger holds s1 on compute-a with v attached
        ro; `seen` is what the cloud holds (the same, by default).
        """
        upgrade_run = upgrade_phases.Upgrade(Tracker(mock.Mock(),
                                                     UpgradeReport()))
        upgrade_run.tracker.cloud.servers.return_value = []
        upgrade_run.tracker.ledger.place('s1', 'mae-compute-a')
        upgrade_run.tracker.ledger.attach('s1', 'v', 'ro', 'ro')
        with mock.patch.object(upgrade, 'running_releases',
                               return_value=running), \
                mock.patch.object(upgrade, 'versions', return_value={}), \
                mock.patch.object(releases, 'imported_from',
                                  return_value=SERIES_IMPORTS), \
                mock.patch.object(releases, 'release_of',
                                  return_value=releases.SERIES), \
                mock.patch.object(steps.ledger, 'observe',
                                  return_value=seen or agreeing()):
            report = upgrade.run_phases(upgrade_run, (steps.Step(
                'a-phase', 'a phase', lambda upgrade: 'done'),))
        return report.steps[0]['passed'], report

    def test_a_phase_fails_when_a_service_runs_another_release(self):
        wrong = {'nova-api': self.entry('control', 'series', 'pristine')}
        passed, report = self.run_phase(wrong)
        self.assertFalse(passed)
        self.assertIn('nova-api runs series', report.steps[0]['detail'])
        self.assertEqual(wrong, report.running['a-phase'])
        self.assertEqual({'a-phase': {}}, report.versions)

    def test_a_phase_passes_on_its_parts_releases_and_its_ledger(self):
        right = {'nova-api': self.entry('control', 'series', 'series')}
        passed, report = self.run_phase(right)
        self.assertTrue(passed)
        self.assertEqual('done', report.steps[0]['detail'])
        self.assertEqual(agreeing(), report.steps[0]['seen'])

    def test_every_phase_is_reconciled_and_needs_the_one_before(self):
        phases = upgrade_phases.PHASES
        self.assertTrue(all(phase.reconcile for phase in phases))
        self.assertEqual([None] + [phase.name for phase in phases[:-1]],
                         [phase.needs for phase in phases])

    def test_an_attachment_nova_dropped_fails_the_phase(self):
        right = {'nova-api': self.entry('control', 'series', 'series')}
        dropped = dict(agreeing(), nova=[])
        passed, report = self.run_phase(right, dropped)
        self.assertFalse(passed)
        self.assertIn('Nova has no attachment of v to s1',
                      report.steps[0]['detail'])


SERIES_IMPORTS = {'nova': '/work/.work/trees/nova/nova',
                  'cinder': '/work/.work/trees/cinder/cinder'}


class ImportedTest(unittest.TestCase):

    def problems(self, imported, release):
        with mock.patch.object(releases, 'release_of', return_value=release):
            return upgrade.imported_problems({'control': imported})

    def test_each_part_imports_its_release(self):
        pristine = {project: f'{releases.pristine_path()}/{project}'
                    for project in releases.PROJECTS}
        self.assertEqual([], self.problems(pristine, releases.PRISTINE))
        self.assertEqual([], self.problems(SERIES_IMPORTS, releases.SERIES))

    def test_a_part_importing_another_release_fails(self):
        self.assertEqual(
            ['control imports cinder from /work/.work/trees/cinder/cinder, '
             'not its release pristine',
             'control imports nova from /work/.work/trees/nova/nova, not '
             'its release pristine'],
            sorted(self.problems(SERIES_IMPORTS, releases.PRISTINE)))
        pristine_nova = dict(SERIES_IMPORTS,
                             nova=f'{releases.pristine_path()}/nova')
        self.assertEqual([f'control imports nova from '
                          f'{releases.pristine_path()}/nova, not its release '
                          'series'],
                         self.problems(pristine_nova, releases.SERIES))

    def test_a_project_not_imported_fails(self):
        self.assertEqual(['control does not import cinder'], self.problems(
            {'nova': SERIES_IMPORTS['nova']}, releases.SERIES))


def agreeing():
    """What the cloud holds of the ledger of run_phase()'s phase."""
    return {'servers': {'s1': 'mae-compute-a'},
            'nova': [{'server': 's1', 'volume': 'v', 'api_mode': 'ro'}],
            'cinder': [{'server': 's1', 'volume': 'v', 'mode': 'ro',
                        'status': 'attached', 'host': 'mae-compute-a'}],
            'domains': {'mae-compute-a': ['s1'], 'mae-compute-b': []}}


if __name__ == '__main__':
    unittest.main()
