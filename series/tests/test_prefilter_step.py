"""Tests of series.cloud.prefilter_step that need no cloud: the step
counts its checks only while the trait it removed stayed removed, with
the incapable host's nova-compute restarted without provider refresh
for the step, and waited for until it reported after its start.
"""

import datetime
import unittest
from unittest import mock

from series.cloud.client import Failed
from series.cloud import configs
from series.cloud import prefilter_step
from series.cloud import rest
from series.cloud import services
from series.cloud import steps
from series.cloud.tracker import Tracker
from series import config


class TraitCloud:
    """Placement as the step sees it: whether nova-compute put the trait
    back during each attempt.
    """

    def __init__(self, put_back):
        self.put_back = list(put_back)
        self.present = True
        self.changes = []
        self.calls = []

    def image(self):
        return 'image'

    def set_trait(self, host, trait, present):
        self.changes.append((host, trait, present))
        self.present = present

    def traits(self, host):
        self.calls.append('traits')
        if self.put_back.pop(0):
            self.present = True
        return {prefilter_step.READ_ONLY_TRAIT} if self.present else set()

    def delete_server(self, server_id):
        pass

    def wait_deleted(self, server_ids):
        pass


class ReadOnlyPrefilterTest(unittest.TestCase):

    def setUp(self):
        self.tracker = Tracker(None)
        self.tracker.new_volume = mock.Mock(return_value='root')
        self.provider_refresh = self.patch(prefilter_step, 'provider_refresh')
        self.prefilter_checks = self.patch(prefilter_step, 'prefilter_checks')
        self.patch(prefilter_step, 'prefilter_takes_rw', self.takes_rw)
        self.patch(steps, 'say')

    def patch(self, module, name, value=None):
        patcher = mock.patch.object(module, name, value or mock.Mock())
        self.addCleanup(patcher.stop)
        return patcher.start()

    def takes_rw(self, cloud, root, host, created):
        cloud.calls.append('rw')
        return 'rw'

    def run_step(self, put_back, checks):
        self.tracker.cloud = TraitCloud(put_back)
        self.prefilter_checks.side_effect = checks
        try:
            return (prefilter_step.read_only_prefilter(self.tracker),
                    self.tracker)
        except (Failed, config.SeriesError) as error:
            return error, self.tracker

    def test_checks_that_held_count(self):
        outcome, runner = self.run_step([False], ['checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual([False, True], [present for _, _, present in
                                         runner.cloud.changes])
        self.assertTrue(runner.cloud.present)

    def test_checks_again_after_the_trait_came_back(self):
        outcome, runner = self.run_step(
            [True, False], [Failed('ro server on mae-compute-b'), 'checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual(2, self.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_a_timeout_after_the_trait_came_back_checks_again(self):
        # The scheduler took the host with the trait back for the cold
        # migration: the wait for the refused migration timed out.
        outcome, runner = self.run_step(
            [True, False], [config.SeriesError(
                "timeout waiting for 'conductor_migrate_server Error'"),
                'checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual(2, self.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_a_timeout_while_the_trait_was_missing_fails(self):
        error, runner = self.run_step([False], [config.SeriesError(
            "timeout waiting for 'conductor_migrate_server Error'")])
        self.assertIsInstance(error, config.SeriesError)
        self.assertEqual(1, self.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_the_step_runs_without_provider_refresh(self):
        outcome, runner = self.run_step([False], ['checked'])
        self.assertEqual([mock.call(runner.cloud, 'mae-compute-b', False),
                          mock.call(runner.cloud, 'mae-compute-b', True)],
                         self.provider_refresh.call_args_list)
        # Restarted before the trait is removed, again after it is back,
        # also when the checks fail.
        refresh = []
        self.provider_refresh.side_effect = lambda cloud, host, on: (
            refresh.append((host, on, cloud.present)))
        error, _ = self.run_step([False],
                                 [Failed('ro server on mae-compute-b')])
        self.assertIsInstance(error, Failed)
        self.assertEqual([('mae-compute-b', False, True),
                          ('mae-compute-b', True, True)], refresh)

    def test_the_trait_is_read_before_the_host_takes_a_server(self):
        # The rw server's claim is the host's first write to placement.
        outcome, runner = self.run_step([False], ['checked'])
        self.assertEqual('checked; rw', outcome)
        self.assertEqual(['traits', 'rw'], runner.cloud.calls)

    def test_a_failure_while_the_trait_was_missing_fails(self):
        error, runner = self.run_step([False],
                                      [Failed('ro server on mae-compute-b')])
        self.assertIsInstance(error, Failed)
        self.assertIn('mae-compute-b', str(error))
        self.assertEqual(1, self.prefilter_checks.call_count)
        self.assertTrue(runner.cloud.present)

    def test_the_trait_coming_back_every_time_fails(self):
        error, runner = self.run_step([True, True], ['checked', 'checked'])
        self.assertIsInstance(error, Failed)
        self.assertIn('came back', str(error))
        self.assertTrue(runner.cloud.present)


class ProviderRefreshTest(unittest.TestCase):
    """The restart of a host's nova-compute, with fakes of its
    configuration, its process and its reports recording what happens.
    """

    def setUp(self):
        self.events = []
        self.compute = mock.Mock(reports_as=('nova-api', 'nova-compute',
                                             'mae-compute-b'))
        self.compute.stop.side_effect = self.stop
        # Not reported at the first look, then reported.
        self.reports = [set(), {self.compute.reports_as}]
        for module, name, fake in (
                (configs, 'write_nova_compute', self.write_nova_compute),
                (services, 'compute', lambda host: self.compute),
                (services, 'start', self.start),
                (services, 'reported_up', self.reported_up),
                (rest.time, 'sleep', lambda seconds: None)):
            patcher = mock.patch.object(module, name, fake)
            patcher.start()
            self.addCleanup(patcher.stop)

    def write_nova_compute(self, host, refresh_provider):
        self.events.append(('write', host.name, refresh_provider))

    def stop(self):
        self.stopped_at = datetime.datetime.now(datetime.timezone.utc)
        self.events.append('stop')

    def start(self, service, timeout, admin):
        self.events.append(('start', service, admin))

    def reported_up(self, admin, since):
        self.events.append(('reported', admin, since >= self.stopped_at))
        return self.reports.pop(0)

    def test_restarted_without_refresh_and_waited_for(self):
        prefilter_step.provider_refresh(mock.Mock(admin='admin'),
                                        'mae-compute-b', False)
        # Only a report since the stop counts: one from before is not
        # of the restarted nova-compute.
        self.assertEqual([('write', 'mae-compute-b', False), 'stop',
                          ('start', self.compute, 'admin'),
                          ('reported', 'admin', True),
                          ('reported', 'admin', True)], self.events)


CAPABLE, INCAPABLE = 'mae-compute-a', 'mae-compute-b'


class ChecksCloud:
    """Nova as the scheduler leaves it without the trait on INCAPABLE:
    each server created is where `hosts` says (None: ERROR with
    `fault`), and a migration fails with `details`.
    """

    def __init__(self, hosts, fault='No valid host was found. ',
                 details='No valid host was found. No valid host found '
                 'for cold migrate', migrated_to=None):
        self.hosts = list(hosts)
        self.migrated_to = migrated_to
        self.fault = fault
        self.details = details
        self.placed = {}

    def create_servers(self, name, bdms, host=None):
        return name

    def reserved(self, name):
        self.placed[name] = self.hosts.pop(0)
        return [name]

    def wait_server(self, server_id, statuses=('ACTIVE',)):
        host = self.placed[server_id]
        if host is None:
            return {'status': 'ERROR', 'fault': {'message': self.fault}}
        return {'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': host}

    def action(self, server_id, body, admin=False):
        if self.migrated_to:
            self.placed[server_id] = self.migrated_to

    def events(self, cloud, server_id):
        return {}, [{'event': prefilter_step.MIGRATE_EVENT,
                     'result': 'Error', 'details': self.details}]


class PrefilterChecksTest(unittest.TestCase):
    """Each verdict of the step fails when the cloud does otherwise."""

    def checks(self, cloud):
        with mock.patch.object(prefilter_step.fault_aftermath,
                               'latest_events', cloud.events):
            return prefilter_step.prefilter_checks(
                cloud, 'root', CAPABLE, INCAPABLE, [])

    def test_what_the_scheduler_does_without_the_trait(self):
        detail = self.checks(ChecksCloud([None, CAPABLE]))
        self.assertIn('No valid host found for cold migrate', detail)

    def test_an_ro_server_asked_on_the_incapable_host_and_put_there(self):
        with self.assertRaisesRegex(Failed, f'ro on {INCAPABLE}: ACTIVE'):
            self.checks(ChecksCloud([INCAPABLE, CAPABLE]))

    def test_a_refusal_for_another_cause(self):
        with self.assertRaisesRegex(Failed, f'ro on {INCAPABLE}: ERROR'):
            self.checks(ChecksCloud([None, CAPABLE], fault='Volume error'))

    def test_an_ro_server_scheduled_to_the_incapable_host(self):
        with self.assertRaisesRegex(Failed, f'^ro server on {INCAPABLE}$'):
            self.checks(ChecksCloud([None, INCAPABLE]))

    def test_a_migration_failed_for_another_cause(self):
        with self.assertRaisesRegex(Failed, 'not for want of a host'):
            self.checks(ChecksCloud([None, CAPABLE],
                                    details='MessagingTimeout'))

    def test_an_ro_server_migrated_anyway(self):
        with self.assertRaisesRegex(Failed, f'ro server on {INCAPABLE} '
                                    'after the migration'):
            self.checks(ChecksCloud([None, CAPABLE], migrated_to=INCAPABLE))

    def test_the_rw_control_runs_on_the_incapable_host(self):
        self.assertEqual(
            f'rw asked on {INCAPABLE} -> ACTIVE there',
            prefilter_step.prefilter_takes_rw(ChecksCloud([INCAPABLE]),
                                              'root', INCAPABLE, []))

    def test_an_rw_control_that_did_not_land_there_fails(self):
        with self.assertRaisesRegex(Failed, f'rw server on {CAPABLE}'):
            prefilter_step.prefilter_takes_rw(ChecksCloud([CAPABLE]),
                                              'root', INCAPABLE, [])


if __name__ == '__main__':
    unittest.main()
