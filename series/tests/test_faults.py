"""Tests of series.cloud.faults that need no cloud: how the RabbitMQ
fault holds a live migration in its memory copy, and when it restarts
RabbitMQ and lets the migration go; what the operator's clean-up runs
and why; that what a fault left is recorded before cleaning; which
guests are checked; that a fault is confirmed to have happened.
"""

import datetime
import subprocess
import threading
import unittest
from unittest import mock

from series.cloud import client
from series.cloud import faults
from series.cloud import hosts
from series.cloud import services


def virsh_answering(job_types):
    """A fake hosts.virsh whose domjobinfo reports each of `job_types` in
    turn; the calls it got are in its `calls`.
    """
    answers = iter(job_types)
    calls = []

    def virsh(host, *args, check=True):
        calls.append(args)
        if args[0] == 'domjobinfo':
            return subprocess.CompletedProcess(
                args, 0, stdout=f'Job type:         {next(answers)}\n')
        return subprocess.CompletedProcess(args, 0, stdout='')
    virsh.calls = calls
    return virsh


class ThrottleMigrationTest(unittest.TestCase):

    def throttle(self, job_types):
        virsh = virsh_answering(job_types)
        with mock.patch.object(hosts, 'virsh', virsh):
            held = faults.throttle_migration(hosts.HOSTS[0], 'instance-1',
                                             faults.HELD_MIB_PER_SECOND)
        return held, virsh.calls

    def test_a_running_job_is_slowed_down(self):
        held, calls = self.throttle(['Unbounded', 'Unbounded'])
        self.assertTrue(held)
        self.assertIn(('migrate-setspeed', 'instance-1', '1'), calls)

    def test_no_job_yet_sets_no_speed(self):
        # Nova starts its job with an unlimited bandwidth: a speed set
        # before would not hold.
        held, calls = self.throttle(['None'])
        self.assertFalse(held)
        self.assertEqual([('domjobinfo', 'instance-1')], calls)

    def test_a_job_ending_meanwhile_is_not_held(self):
        held, _ = self.throttle(['Unbounded', 'None'])
        self.assertFalse(held)


class RabbitMQRestartTimingTest(unittest.TestCase):
    """The RabbitMQ fault waits for the destination's Started event to be
    handled, and for every service to report after the restart.
    """

    SERVER = '6b4164b7-fd66-4758-a5c8-6a2f0c9e1d20'

    def line(self, text, server=SERVER):
        return (f'2026-11-26 07:51:45.125 17359 INFO nova.compute.manager '
                f'[None req-1 - - - - - -] [instance: {server}] {text}\n')

    def test_started_event_handled(self):
        started = self.line('VM Started (Lifecycle Event)')
        self.assertFalse(faults.lifecycle_handled(started, self.SERVER))
        for outcome in (
                'Checking state _get_power_state',
                'During the sync_power process the instance has moved from '
                'host mae-compute-b to host mae-compute-a',
                'During sync_power_state the instance has a pending task '
                '(migrating). Skip.'):
            self.assertTrue(faults.lifecycle_handled(
                started + self.line(outcome), self.SERVER))

    def test_only_this_servers_event_after_its_start_counts(self):
        handled = self.line('During sync_power_state the instance has a '
                            'pending task (migrating). Skip.')
        self.assertFalse(faults.lifecycle_handled(
            handled + self.line('VM Started (Lifecycle Event)'),
            self.SERVER))
        self.assertFalse(faults.lifecycle_handled(
            self.line('VM Started (Lifecycle Event)') +
            self.line('During sync_power_state the instance has a pending '
                      'task (migrating). Skip.', server='other'),
            self.SERVER))

    def test_reported_after_the_restart(self):
        restarted = datetime.datetime(2026, 11, 26, 7, 51, 50,
                                      tzinfo=datetime.timezone.utc)
        self.assertFalse(services.reported_after(
            {'updated_at': '2026-11-26T07:51:45.000000'}, restarted))
        self.assertTrue(services.reported_after(
            {'updated_at': '2026-11-26T07:52:01.000000'}, restarted))
        self.assertFalse(services.reported_after({'updated_at': None},
                                                 restarted))


class AttachmentsCloud:
    """Nova's BDMs and Cinder's attachment records as clean() sees them;
    a refresh gives the BDM a new attachment and leaves the old record.
    """

    def __init__(self, bdms, records):
        self.bdms = bdms
        self.records = records
        self.deleted = []
        self.admin = mock.Mock(project_id='project')
        self.admin.call.side_effect = self.delete

    def delete(self, method, service, path, **kwargs):
        attachment_id = path.rsplit('/', 1)[1]
        self.deleted.append(attachment_id)
        self.records = [record for record in self.records
                        if record['id'] != attachment_id]

    def cinder_attachments(self, volume_id):
        return [record for record in self.records
                if record['volume_id'] == volume_id]

    def server_bdms(self, cloud, server_id):
        return {key: attachment_id
                for key, attachment_id in self.bdms.items()
                if key[0] == server_id}

    def refresh(self, cloud, server_id, volume_id):
        self.bdms[server_id, volume_id] = 'new'
        self.records.append({'id': 'new', 'instance': server_id,
                             'volume_id': volume_id, 'status': 'attached'})
        return [f'refresh {server_id} {volume_id}']


class CleanTest(unittest.TestCase):

    def clean(self, cloud):
        with mock.patch.object(faults, 'server_bdms', cloud.server_bdms), \
                mock.patch.object(faults, 'refresh', cloud.refresh):
            done = faults.clean(cloud, ['server'], ['volume'])
        self.assertTrue(all(entry['why'] for entry in done))
        self.why = [entry['why'] for entry in done]
        return [entry['command'] for entry in done]

    def test_the_attachment_a_refresh_replaced_is_deleted_at_once(self):
        cloud = AttachmentsCloud(
            {('server', 'volume'): 'stuck'},
            [{'id': 'stuck', 'instance': 'server', 'volume_id': 'volume',
              'status': 'attaching'}])
        self.assertEqual(['refresh server volume',
                          'cinder attachment-delete stuck'],
                         self.clean(cloud))
        self.assertEqual(['new'], [record['id'] for record in cloud.records])
        self.assertIn('holds attaching', self.why[0])

    def test_an_attachment_without_a_bdm_is_deleted(self):
        cloud = AttachmentsCloud(
            {('server', 'volume'): 'good'},
            [{'id': 'good', 'instance': 'server', 'volume_id': 'volume',
              'status': 'attached'},
             {'id': 'orphan', 'instance': 'gone', 'volume_id': 'volume',
              'status': 'reserved'}])
        self.assertEqual(['cinder attachment-delete orphan'],
                         self.clean(cloud))
        self.assertEqual(['orphan'], cloud.deleted)
        self.assertEqual(['reserved attachment of volume that no BDM of '
                          'server gone names'], self.why)


class StateTest(unittest.TestCase):

    def state(self, volume_status, attachment_status):
        cloud = mock.Mock()
        cloud.volume.return_value = {'status': volume_status}
        cloud.cinder_attachments.return_value = [
            {'id': 'attachment', 'instance': 'server', 'status':
             attachment_status, 'attach_mode': 'ro'}]
        with mock.patch.object(faults, 'server_bdms',
                               return_value={('server', 'volume'):
                                             'attachment'}):
            return faults.state(cloud, [], ['volume'])[1]

    def test_an_error_state_is_stuck(self):
        self.assertEqual(
            ['volume volume stuck error_attaching',
             'Cinder attachment attachment of volume stuck error_detaching'],
            self.state('error_attaching', 'error_detaching'))
        self.assertEqual(['volume volume stuck error'],
                         self.state('error', 'attached'))

    def test_attached_and_in_use_is_settled(self):
        self.assertEqual([], self.state('in-use', 'attached'))


class AftermathTest(unittest.TestCase):
    """What a fault left is recorded before cleaning changes it."""

    def aftermath(self, states, commands):
        states = iter(states)
        with mock.patch.object(faults, 'settle',
                               lambda *args, **kwargs: next(states)), \
                mock.patch.object(faults, 'clean', return_value=[
                    {'command': command, 'why': 'test'}
                    for command in commands]):
            return faults.Aftermath(None, ['server'], ['volume'])

    def test_what_was_left_before_cleaning_is_kept(self):
        aftermath = self.aftermath(
            [({'left': 1}, ['stuck attaching']), ({'left': 0}, [])],
            ['cinder attachment-delete a'])
        self.assertEqual({'state': {'left': 1},
                          'problems': ['stuck attaching']},
                         aftermath.left_before_cleaning)
        self.assertEqual({'left': 0}, aftermath.facts)
        self.assertEqual(['cinder attachment-delete a'], aftermath.commands())
        self.assertIn('cleaned with cinder attachment-delete a',
                      aftermath.healed())

    def test_only_a_refresh_restarts_the_guest(self):
        deleted = self.aftermath(
            [({}, ['orphan']), ({}, [])], ['cinder attachment-delete a'])
        self.assertEqual('kept', deleted.guest_restart())
        refreshed = self.aftermath(
            [({}, ['stuck']), ({}, [])],
            ['openstack server stop s', 'openstack server start s'])
        self.assertEqual('restarted', refreshed.guest_restart())

    def test_settled_on_its_own_runs_nothing(self):
        aftermath = self.aftermath([({'left': 0}, [])], ['never'])
        self.assertEqual([], aftermath.cleaned_by)
        self.assertEqual('nothing left once Nova and Cinder had settled',
                         aftermath.healed())


class GuestsTextTest(unittest.TestCase):

    def test_says_what_was_checked(self):
        self.assertEqual(
            '2 guests checked, their ro disks read-only',
            faults.guests_text({'checked': ['a', 'b'], 'no guest': {}}))

    def test_an_error_server_is_no_checked_guest(self):
        text = faults.guests_text(
            {'checked': [], 'no guest': {'a': 'ERROR, domain none'}})
        self.assertNotIn('read-only', text)
        self.assertEqual('no guest to check; without a guest: a ERROR, '
                         'domain none', text)


class GuestViewsTest(unittest.TestCase):

    def test_a_running_guest_is_checked_whatever_its_status(self):
        servers = {'active': ('ACTIVE', 'running'),
                   'error': ('ERROR', 'running'),
                   'failed': ('ERROR', '')}
        cloud = mock.Mock()
        cloud.server.side_effect = lambda server_id: {
            'status': servers[server_id][0],
            'OS-EXT-SRV-ATTR:host': hosts.HOSTS[0].name if servers[
                server_id][1] else None,
            'OS-EXT-SRV-ATTR:instance_name': f'instance-{server_id}'}

        def virsh(host, command, domain, check=True):
            return subprocess.CompletedProcess(
                command, 0, stdout=servers[domain.split('-')[1]][1] + '\n')
        scenario = mock.Mock(cloud=cloud)
        with mock.patch.object(hosts, 'virsh', virsh):
            guests = faults.guest_views(scenario, list(servers), 'kept')
        self.assertEqual(['active', 'error'], guests['checked'])
        self.assertEqual({'failed': 'ERROR, domain none'},
                         guests['no guest'])
        scenario.views.assert_called_once_with(['active', 'error'], 'kept')


class FaultConfirmedTest(unittest.TestCase):

    def test_every_connection_replaced(self):
        self.assertEqual([], faults.restart_confirmed({'<a.1>', '<a.2>'},
                                                      {'<a.3>'}))

    def test_a_connection_that_outlived_the_restart(self):
        self.assertEqual(["1 of RabbitMQ's connections outlived its "
                          'restart'],
                         faults.restart_confirmed({'<a.1>', '<a.2>'},
                                                  {'<a.2>', '<a.3>'}))

    def test_connection_pids_leave_the_header_out(self):
        # rabbitmqctl 3.10's output without --no-table-headers.
        listing = ('pid\n<rabbit@localhost.1795767897.3289.0>\n'
                   '<rabbit@localhost.1795767897.3302.0>\n')
        self.assertEqual({'<rabbit@localhost.1795767897.3289.0>',
                          '<rabbit@localhost.1795767897.3302.0>'},
                         faults.connection_pids(listing))

    def test_the_same_header_is_no_surviving_connection(self):
        before = faults.connection_pids('pid\n<rabbit@h.1.1.0>\n')
        after = faults.connection_pids('pid\n<rabbit@h.1.2.0>\n')
        self.assertEqual([], faults.restart_confirmed(before, after))

    def test_no_connection_before_proves_nothing(self):
        self.assertTrue(faults.restart_confirmed(set(), {'<a.3>'}))

    def test_kill_waits_for_the_process_to_be_gone(self):
        child = subprocess.Popen(['sleep', '60'])
        service = mock.Mock(pid=lambda: child.pid)
        service.name = 'sleeper'
        # The test's child, reaped here as init reaps a service.
        reaper = threading.Thread(target=child.wait)
        reaper.start()
        self.assertEqual(child.pid, faults.kill(service))
        reaper.join()
        self.assertIsNone(services.start_time(child.pid))

    def test_kill_returns_only_once_the_process_is_gone(self):
        alive = iter(['4242', '4242', None])
        service = mock.Mock(pid=lambda: 4242)
        service.name = 'dying'
        with mock.patch.object(faults.os, 'kill') as kill, \
                mock.patch.object(services, 'start_time',
                                  side_effect=lambda pid: next(alive)):
            self.assertEqual(4242, faults.kill(service))
        kill.assert_called_once_with(4242, faults.signal.SIGKILL)
        self.assertIsNone(next(alive, None))

    def test_kill_of_a_service_not_running_fails(self):
        service = mock.Mock(pid=lambda: None)
        service.name = 'gone'
        with self.assertRaisesRegex(client.Failed, 'not running'):
            faults.kill(service)


class HeldLiveMigrationTest(unittest.TestCase):
    """A live migration that ends before it is slowed down: one that
    completed is tried again the other way, one that failed fails.
    """

    def held(self, statuses):
        cloud = mock.Mock()
        cloud.host_of.return_value = hosts.HOSTS[0].name
        cloud.server.return_value = {
            'OS-EXT-SRV-ATTR:instance_name': 'instance-1'}
        scenario = mock.Mock(cloud=cloud)
        scenario.other_host.return_value = hosts.HOSTS[1].name
        answers = iter(statuses)
        with mock.patch.object(faults, 'throttle_migration',
                               return_value=False), \
                mock.patch.object(faults, 'migration_status',
                                  lambda cloud, server: next(answers)):
            return faults.held_live_migration(scenario, 'server'), cloud

    def test_a_failed_migration_fails(self):
        with self.assertRaisesRegex(client.Failed, 'ended error'):
            self.held(['running', 'error'])

    def test_a_completed_one_is_tried_again(self):
        with self.assertRaisesRegex(client.Failed, 'no live migration '
                                    'could be slowed down in 3'):
            self.held(['completed'] * 3)


class GoneServerTest(unittest.TestCase):

    def test_a_server_that_vanished_is_a_problem(self):
        cloud = mock.Mock()
        cloud.admin.call.return_value = mock.Mock(status=404)
        facts, problems = faults.state(cloud, ['server'], [])
        self.assertEqual({'server': 'gone'}, facts['servers'])
        self.assertEqual(['server server is gone (404)'], problems)
