"""Tests of series.cloud.fault_aftermath that need no cloud: what the
operator's clean-up runs and why; that what a fault left is recorded
before cleaning; what is stuck, gone, unfinished or without its other
half (a BDM, a Cinder attachment); which guests are checked.
"""

import subprocess
import types
import unittest
from unittest import mock

from series.cloud import attachment_checks
from series.cloud.client import Failed
from series.cloud import fault_aftermath
from series.cloud import hosts
from series.cloud.tracker import Tracker
from series import config


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
        with mock.patch.object(fault_aftermath, 'server_bdms',
                               cloud.server_bdms), \
                mock.patch.object(fault_aftermath, 'refresh', cloud.refresh):
            done = fault_aftermath.clean(cloud, ['server'], ['volume'])
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
        with mock.patch.object(fault_aftermath, 'server_bdms',
                               return_value={('server', 'volume'):
                                             'attachment'}):
            return fault_aftermath.state(cloud, [], ['volume'])[1]

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
        with mock.patch.object(fault_aftermath, 'settle',
                               lambda *args, **kwargs: next(states)), \
                mock.patch.object(fault_aftermath, 'clean', return_value=[
                    {'command': command, 'why': 'test'}
                    for command in commands]):
            return fault_aftermath.Aftermath(None, ['server'], ['volume'])

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

    def test_each_round_of_cleaning_is_kept(self):
        # A refresh's second round deletes the attachment it replaced.
        aftermath = self.aftermath(
            [({}, ['stuck']), ({}, ['orphan']), ({}, [])],
            ['openstack server stop s'])
        self.assertEqual(['openstack server stop s'] * 2,
                         aftermath.commands())
        self.assertEqual('restarted', aftermath.guest_restart())

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
            fault_aftermath.guests_text({'checked': ['a', 'b'],
                                         'no guest': {}}))

    def test_an_error_server_is_no_checked_guest(self):
        text = fault_aftermath.guests_text(
            {'checked': [], 'no guest': {'a': 'ERROR, domain none'}})
        self.assertNotIn('read-only', text)
        self.assertEqual('no guest to check; without a guest: a ERROR, '
                         'domain none', text)


class GuestViewsTest(unittest.TestCase):

    def views(self, servers, returncode=0, stderr=''):
        """guest_views() of servers {id: (status, domstate or '' for no
        host)}, with check_views() mocked: (guests, check_views).
        """
        cloud = mock.Mock()
        cloud.server.side_effect = lambda server_id: {
            'status': servers[server_id][0],
            'OS-EXT-SRV-ATTR:host': hosts.HOSTS[0].name if servers[
                server_id][1] else None,
            'OS-EXT-SRV-ATTR:instance_name': f'instance-{server_id}'}

        def virsh(host, command, domain, check=True):
            return subprocess.CompletedProcess(
                command, returncode, stderr=stderr,
                stdout=servers[domain.split('-')[1]][1] + '\n')
        self.made = Tracker(cloud)
        with mock.patch.object(hosts, 'virsh', virsh), \
                mock.patch.object(attachment_checks,
                                  'check_views') as check_views:
            guests = fault_aftermath.guest_views(self.made, list(servers),
                                                 'kept')
        return guests, check_views

    def test_a_running_guest_is_checked_whatever_its_status(self):
        guests, check_views = self.views({'active': ('ACTIVE', 'running'),
                                          'error': ('ERROR', 'running'),
                                          'failed': ('ERROR', '')})
        self.assertEqual(['active', 'error'], guests['checked'])
        self.assertEqual({'failed': 'ERROR, domain none'},
                         guests['no guest'])
        check_views.assert_called_once_with(self.made, ['active', 'error'],
                                            'kept')
        self.assertEqual([], guests['wrong'])

    def test_an_active_server_whose_guest_is_not_running_is_wrong(self):
        guests, _ = self.views({'paused': ('ACTIVE', 'paused'),
                                'off': ('ACTIVE', 'shut off'),
                                'stopped': ('SHUTOFF', 'shut off')})
        self.assertEqual(['paused is ACTIVE, its guest paused',
                          'off is ACTIVE, its guest shut off'],
                         guests['wrong'])
        self.assertEqual({'stopped': 'SHUTOFF, domain shut off'},
                         guests['no guest'])

    def test_an_active_server_without_a_domain_is_wrong(self):
        guests, _ = self.views(
            {'gone': ('ACTIVE', 'x')}, returncode=1,
            stderr="error: failed to get domain 'instance-gone'")
        self.assertEqual(['gone is ACTIVE, its guest none'], guests['wrong'])

    def test_a_libvirtd_that_cannot_tell_is_an_error(self):
        with self.assertRaisesRegex(config.SeriesError,
                                    'domstate instance-a failed'):
            self.views({'a': ('ERROR', 'x')}, returncode=1,
                       stderr='error: failed to connect to the hypervisor')

    def test_a_wrong_disk_is_kept_for_the_faults_entry(self):
        cloud = mock.Mock()
        cloud.server.return_value = {
            'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': hosts.HOSTS[0].name,
            'OS-EXT-SRV-ATTR:instance_name': 'instance-a'}
        running = subprocess.CompletedProcess([], 0, stdout='running\n')
        with mock.patch.object(hosts, 'virsh', return_value=running), \
                mock.patch.object(attachment_checks, 'check_views',
                                  side_effect=Failed('v on a: qemu_ro')):
            guests = fault_aftermath.guest_views(Tracker(cloud), ['a'])
        self.assertEqual(['v on a: qemu_ro'], guests['wrong'])
        self.assertEqual('1 guests checked: v on a: qemu_ro',
                         fault_aftermath.guests_text(guests))


class GoneServerTest(unittest.TestCase):

    def test_a_server_that_vanished_is_a_problem(self):
        cloud = mock.Mock()
        cloud.admin.call.return_value = mock.Mock(status=404)
        facts, problems = fault_aftermath.state(cloud, ['server'], [])
        self.assertEqual({'server': 'gone'}, facts['servers'])
        self.assertEqual(['server server is gone (404)'], problems)


def reply(body, status=200):
    return types.SimpleNamespace(status=status, body=body)


class StateCloud:
    """One server as Nova shows it (its status, its latest instance
    action's events, its BDMs: {volume: attachment id}) and one volume
    as Cinder does (its attachment records), as state() reads them.
    """

    def __init__(self, status='ACTIVE', task=None, fault=None,
                 events=None, bdms=None, records=None):
        self.server = {'status': status, 'OS-EXT-STS:task_state': task,
                       'OS-EXT-SRV-ATTR:host': hosts.HOSTS[0].name}
        if fault:
            self.server['fault'] = {'message': fault}
        self.events = [{'event': 'compute_attach_volume',
                        'result': 'Success', 'finish_time': 'then'}] \
            if events is None else events
        self.bdms = {'volume': 'attachment'} if bdms is None else bdms
        self.records = [{'id': 'attachment', 'instance': 'server',
                         'status': 'attached', 'attach_mode': 'ro'}] \
            if records is None else records
        # The admin's and the member's requests alike.
        self.admin = self.member = self

    def call(self, method, service, path, **kwargs):
        if path.endswith('/os-volume_attachments'):
            return reply({'volumeAttachments': [
                {'volumeId': volume_id, 'attachment_id': attachment_id}
                for volume_id, attachment_id in self.bdms.items()]})
        return reply({'server': self.server})

    def get(self, service, path, **kwargs):
        if path.endswith('/os-instance-actions'):
            return {'instanceActions': [
                {'action': 'attach_volume', 'request_id': 'req-1',
                 'start_time': 'then'}]}
        return {'instanceAction': {'events': self.events}}

    def volume(self, volume_id):
        return {'status': 'in-use'}

    def cinder_attachments(self, volume_id):
        return self.records


class ServerStateTest(unittest.TestCase):
    """Each thing a fault may leave of a server and its attachments is a
    problem of state().
    """

    def problems(self, **cloud):
        return fault_aftermath.state(StateCloud(**cloud), ['server'],
                                     ['volume'])[1]

    def test_active_and_attached_is_settled(self):
        self.assertEqual([], self.problems())
        self.assertEqual([], self.problems(status='ERROR', fault='boom'))

    def test_error_with_no_fault(self):
        self.assertEqual(['server server is in ERROR with no fault'],
                         self.problems(status='ERROR'))

    def test_neither_active_nor_error_or_a_task_under_way(self):
        self.assertEqual(['server server is BUILD/None'],
                         self.problems(status='BUILD'))
        self.assertEqual(['server server is ACTIVE/migrating'],
                         self.problems(task='migrating'))

    def test_an_unfinished_instance_action(self):
        self.assertEqual(
            ['server server: attach_volume: compute_attach_volume None not '
             'finished (compute_attach_volume)'],
            self.problems(events=[{'event': 'compute_attach_volume',
                                   'result': None, 'finish_time': None}]))
        self.assertEqual(['server server: attach_volume: no event not '
                          'finished (no event started)'],
                         self.problems(events=[]))

    def test_a_bdm_naming_an_attachment_cinder_does_not_have(self):
        self.assertEqual(['server server has a BDM of volume whose '
                          'attachment attachment Cinder does not have'],
                         self.problems(records=[]))

    def test_a_cinder_attachment_with_no_server_with_its_bdm(self):
        self.assertEqual(['Cinder attachment attachment of volume '
                          '(attached) has no server with its BDM (server '
                          'server)'], self.problems(bdms={}))


class RecordTest(unittest.TestCase):
    """A fault's entry: what was left before cleaning and how it was
    cleaned as the Aftermath kept them, what is left now from a fresh
    look; it fails while anything is left.
    """

    AFTERMATH = types.SimpleNamespace(
        left_before_cleaning={'state': 'before', 'problems': ['stuck']},
        cleaned_by=[{'command': 'cinder attachment-delete a',
                     'why': 'test'}])

    def record(self, made):
        return fault_aftermath.record(made, 'fault', 'injected', ['server'],
                                      ['volume'], 0, self.AFTERMATH,
                                      {'checked': [], 'no guest': {}})

    def recorded(self, made):
        """The one entry in the report, checked against the Aftermath and
        a fresh state().
        """
        [entry] = made.report.faults
        self.assertIs(self.AFTERMATH.left_before_cleaning,
                      entry['left_before_cleaning'])
        self.assertIs(self.AFTERMATH.cleaned_by, entry['cleaned_by'])
        self.assertEqual(fault_aftermath.state(made.cloud, ['server'],
                                               ['volume']),
                         (entry['left'], entry['problems']))
        return entry

    def test_the_entry_of_a_settled_cloud(self):
        made = Tracker(StateCloud())
        self.assertIs(self.record(made), self.recorded(made))

    def test_a_wrong_guest_disk_fails_once_recorded(self):
        made = Tracker(StateCloud())
        with self.assertRaisesRegex(Failed, 'v on server: qemu_ro'):
            fault_aftermath.record(
                made, 'fault', 'injected', ['server'], ['volume'], 0,
                self.AFTERMATH, {'checked': ['server'], 'no guest': {},
                                 'wrong': ['v on server: qemu_ro']})
        self.recorded(made)
        self.assertEqual('ACTIVE', made.report.faults[0]['left']['servers'][
            'server']['status'])

    def test_a_ledger_disagreeing_with_the_cloud_fails_once_recorded(self):
        made = Tracker(StateCloud())
        with self.assertRaisesRegex(Failed, 'the ledger: Nova has no '
                                    'attachment of v to server'):
            fault_aftermath.record(
                made, 'fault', 'injected', ['server'], ['volume'], 0,
                self.AFTERMATH, {'checked': [], 'no guest': {}},
                ledger=['Nova has no attachment of v to server'])
        self.assertEqual(['Nova has no attachment of v to server'],
                         self.recorded(made)['ledger'])

    def test_a_problem_left_fails_once_recorded(self):
        made = Tracker(StateCloud(status='ERROR'))
        with self.assertRaisesRegex(Failed, '^server server is in ERROR '
                                    'with no fault$'):
            self.record(made)
        self.assertEqual(['server server is in ERROR with no fault'],
                         self.recorded(made)['problems'])


if __name__ == '__main__':
    unittest.main()
