"""Tests of series.cloud.faults that need no cloud: how the RabbitMQ
fault holds a live migration in its memory copy, and when it restarts
RabbitMQ and lets the migration go; that a fault is confirmed to have
happened; which servers' attachments the ledger then holds.
"""

import datetime
import subprocess
import threading
import types
import unittest
from unittest import mock

from series.cloud import client
from series.cloud import faults
from series.cloud import hosts
from series.cloud import probes
from series.cloud import services
from series.cloud.tracker import Tracker


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


class RabbitMQRestartedTest(unittest.TestCase):

    def test_a_migration_over_before_the_restart_fails_first(self):
        made = Tracker(mock.Mock())
        made.servers = ['s0', 's1', 's2', 's3']
        source, destination = (host.name for host in hosts.HOSTS)
        with mock.patch.object(faults, 'held_live_migration', return_value=(
                source, destination, 'instance-3')), \
                mock.patch.object(faults, 'migration_status',
                                  return_value='completed'), \
                mock.patch.object(faults, 'log_size', return_value=0), \
                mock.patch.object(faults, 'restart_rabbitmq') as restart:
            with self.assertRaisesRegex(client.Failed, 'the live migration '
                                        'was completed before RabbitMQ'):
                faults.rabbitmq_restarted(made)
        restart.assert_not_called()

    def test_a_connection_that_outlived_the_restart_fails_the_fault(self):
        made = Tracker(mock.Mock())
        made.servers = ['s0', 's1', 's2', 's3']
        source, destination = (host.name for host in hosts.HOSTS)
        with mock.patch.object(faults, 'held_live_migration', return_value=(
                source, destination, 'instance-3')), \
                mock.patch.object(faults, 'migration_status',
                                  return_value='running'), \
                mock.patch.object(faults, 'log_size', return_value=0), \
                mock.patch.object(faults, 'wait_lifecycle_handled'), \
                mock.patch.object(faults, 'restart_rabbitmq'), \
                mock.patch.object(faults, 'wait_services_up'), \
                mock.patch.object(faults, 'throttle_migration'), \
                mock.patch.object(faults, 'rabbitmq_connections',
                                  side_effect=[{'<1>', '<2>'},
                                               {'<2>', '<3>'}]), \
                mock.patch.object(hosts, 'by_name'), \
                mock.patch.object(faults, 'attached_volumes'), \
                mock.patch.object(faults, 'fault_aftermath') as aftermath:
            # What the rest of the fault would see, were it judged.
            aftermath.record.return_value = {'left': {'servers': {'s3': {
                'host': destination, 'status': 'ACTIVE'}}}}
            with self.assertRaisesRegex(client.Failed, '1 of RabbitMQ'):
                faults.rabbitmq_restarted(made)
        aftermath.Aftermath.assert_not_called()


class CinderVolumeKilledTest(unittest.TestCase):

    def test_the_ledger_is_compared_before_its_servers_are_deleted(self):
        made = Tracker(mock.Mock())
        made.new_volume = mock.Mock(return_value='root')
        made.cloud.reserved.return_value = ['f1', 'f2']
        order = mock.Mock()
        with mock.patch.object(faults, 'kill', return_value=42), \
                mock.patch.object(faults.time, 'sleep'), \
                mock.patch.object(made, 'slot_region'), \
                mock.patch.object(services, 'start'), \
                mock.patch.object(faults, 'expect_holders'), \
                mock.patch.object(faults.steps, 'ledger_problems',
                                  order.ledger_problems), \
                mock.patch.object(faults, 'remove', order.remove), \
                mock.patch.object(faults, 'fault_aftermath') as aftermath:
            order.ledger_problems.return_value = ['f1 dropped']
            aftermath.record.return_value = {'left': {'servers': {
                server: {'status': 'ACTIVE'} for server in ('f1', 'f2')}},
                'seconds': 1}
            faults.cinder_volume_killed(made)
        self.assertEqual(['f1 dropped'],
                         aftermath.record.call_args.kwargs['ledger'])
        self.assertEqual(['ledger_problems', 'remove'],
                         [call[0] for call in order.mock_calls])


class NovaComputeKilledTest(unittest.TestCase):
    """The nova-compute-killed fault counts only when nova-compute's attach
    event is still unfinished once the killed process can no longer finish it.
    """

    def killed(self, after_kill):
        made = Tracker(mock.Mock())
        made.servers = ['s0', 's1', 's2']
        made.new_volume = mock.Mock(return_value='v')
        made.cloud.host_of.return_value = hosts.HOSTS[0].name
        reached = ('attach_volume: compute_attach_volume None', 'x')
        with mock.patch.object(faults, 'kill', return_value=42), \
                mock.patch.object(faults.time, 'sleep'), \
                mock.patch.object(made, 'slot_region'), \
                mock.patch.object(services, 'start') as start, \
                mock.patch.object(faults, 'fault_aftermath') as aftermath:
            aftermath.latest_action.side_effect = [reached, after_kill]
            aftermath.Aftermath.return_value.facts = {
                'volumes': {'v': {'attachments': []}}}
            try:
                faults.nova_compute_killed(made)
            finally:
                start.assert_called_once()
        return aftermath.record.call_args

    def test_an_attach_cut_off_by_the_kill(self):
        recorded = self.killed(('attach_volume: compute_attach_volume None',
                                'compute_attach_volume'))
        self.assertIs(True, recorded.kwargs['attach_interrupted'])

    def test_an_attach_finished_before_the_kill_fails(self):
        with self.assertRaisesRegex(client.Failed, 'not under way'):
            self.killed(('attach_volume: compute_attach_volume Success',
                         ''))


class HeldLiveMigrationTest(unittest.TestCase):
    """A live migration that ends before it is slowed down: one that
    completed is tried again the other way, one that failed fails.
    """

    def held(self, statuses):
        cloud = mock.Mock()
        cloud.host_of.return_value = hosts.HOSTS[0].name
        cloud.server.return_value = {
            'OS-EXT-SRV-ATTR:instance_name': 'instance-1'}
        answers = iter(statuses)
        with mock.patch.object(faults, 'throttle_migration',
                               return_value=False), \
                mock.patch.object(faults, 'migration_status',
                                  lambda cloud, server: next(answers)), \
                mock.patch.object(faults, 'say'):
            return faults.held_live_migration(Tracker(cloud), 'server'), cloud

    def test_a_failed_migration_fails(self):
        with self.assertRaisesRegex(client.Failed, 'ended error'):
            self.held(['running', 'error'])

    def test_a_completed_one_is_tried_again(self):
        with self.assertRaisesRegex(client.Failed, 'no live migration '
                                    'could be slowed down in 3'):
            self.held(['completed'] * 3)


class ExpectHoldersTest(unittest.TestCase):
    """After the cinder-volume fault, the ledger holds the root ro on
    every one of the fault's servers that Cinder shows holding it,
    whatever its status.
    """

    STATUSES = {'a01-active': 'ACTIVE', 'b02-error': 'ERROR',
                'c03-failed': 'ERROR'}

    def test_a_server_in_error_holding_the_root_is_expected_ro(self):
        cloud = mock.Mock()
        cloud.host_of.return_value = hosts.HOSTS[0].name
        cloud.server.side_effect = lambda server_id: {
            'status': self.STATUSES[server_id]}
        cloud.slot_of.return_value = 0
        made = Tracker(cloud)
        # Cinder's attachments of the root once the fault was cleaned;
        # d04-other is no server of the fault.
        aftermath = types.SimpleNamespace(facts={'volumes': {'root': {
            'attachments': [{'server': server_id} for server_id in (
                'b02-error', 'a01-active', 'd04-other')]}}})
        faults.expect_holders(made, aftermath, list(self.STATUSES), 'root',
                              bytes(probes.REGION_BYTES))
        self.assertEqual({('a01-active', 'root'): 'ro',
                          ('b02-error', 'root'): 'ro'}, made.ledger.modes)
        self.assertEqual({'a01-active': hosts.HOSTS[0].name,
                          'b02-error': hosts.HOSTS[0].name},
                         made.ledger.hosts)


if __name__ == '__main__':
    unittest.main()
