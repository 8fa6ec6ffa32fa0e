"""Tests of series.cloud.upgrade_phases that need no cloud: a refusal
passes only as the series makes it, and is recorded; a started
nova-compute is waited for until it reports; each phase fails on a
fact of the cloud it judges being wrong (the computes' service versions
at the start, what db sync did to the database, a 409 of another cause).
"""

import json
import time
import unittest
from unittest import mock

from series.cloud import attachment_checks
from series.cloud import client
from series.cloud import databases
from series.cloud import releases
from series.cloud import rest
from series.cloud import services
from series.cloud import tracker as tracker_module
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


class PhaseTestCase(unittest.TestCase):

    def patch(self, target, name, **kwargs):
        patcher = mock.patch.object(target, name, **kwargs)
        self.addCleanup(patcher.stop)
        return patcher.start()


class PristineTest(PhaseTestCase):

    def setUp(self):
        self.compute_versions = self.patch(
            databases, 'compute_versions',
            return_value={'mae-compute-a': 74, 'mae-compute-b': 74})
        self.patch(attachment_checks, 'check_views',
                   return_value='views checked')
        self.tracker = mock.Mock()
        self.tracker.ledger.requested = {}
        self.tracker.cloud.reserved.return_value = ['server']
        self.tracker.cloud.attachments.return_value = []

    def test_computes_at_74_pass(self):
        detail = upgrade_phases.pristine(upgrade_phases.Upgrade(self.tracker))
        self.assertIn('views checked', detail)

    def test_the_shelved_server_is_in_the_ledger_as_cinder_keeps_it(self):
        upgrade_phases.pristine(upgrade_phases.Upgrade(self.tracker))
        self.tracker.ledger.offload.assert_called_once_with('server', 'null')

    def test_a_compute_at_75_fails_before_a_server_boots(self):
        self.compute_versions.return_value = {'mae-compute-a': 74,
                                              'mae-compute-b': 76}
        with self.assertRaisesRegex(client.Failed, 'versions .*, not 74'):
            upgrade_phases.pristine(upgrade_phases.Upgrade(self.tracker))
        self.tracker.cloud.create_servers.assert_not_called()


class UpgradeControlTest(PhaseTestCase):
    """The control-upgraded phase on the facts of a db sync that added
    attach_mode to a non-empty block_device_mapping; each failing test makes
    one wrong.
    """

    def setUp(self):
        self.rows = [['12']]
        self.modes = [[None]]
        self.patch(databases, 'query', side_effect=self.query)
        self.alembic_head = self.patch(databases, 'alembic_head',
                                       side_effect=['before', 'after'])
        self.columns_before = {'mae_nova.block_device_mapping': False,
                               'mae_nova.shadow_block_device_mapping': False}
        self.columns_after = {'mae_nova.block_device_mapping': True,
                              'mae_nova.shadow_block_device_mapping': True}
        self.patch(databases, 'mode_columns',
                   side_effect=[self.columns_before, self.columns_after])
        self.patch(databases, 'sync_databases',
                   return_value={'nova db sync': 4.2})
        self.patch(databases, 'compute_versions')
        self.stop_all = self.patch(services, 'stop_all')
        self.patch(releases, 'set_release')
        self.patch(upgrade_phases, 'start_services')
        self.patch(upgrade_phases, 'wait_computes_up')
        self.patch(attachment_checks, 'check_views',
                   return_value='views checked')
        self.tracker = Tracker(mock.Mock(), UpgradeReport())
        self.tracker.cloud.servers.return_value = []
        self.upgrade = upgrade_phases.Upgrade(self.tracker)
        self.upgrade.before_upgrade = {}

    def query(self, database, sql):
        return self.rows if 'COUNT(*)' in sql else self.modes

    def test_a_sync_that_added_attach_mode_passes(self):
        detail = upgrade_phases.upgrade_control(self.upgrade)
        self.assertIn('db sync on 12 block device mappings in 4.2s', detail)
        self.assertEqual(
            {'block_device_mapping rows': 12,
             'sync seconds': {'nova db sync': 4.2},
             'attach_mode of existing rows': [None],
             'alembic before': 'before', 'alembic': 'after'},
            self.tracker.report.database['upgrade'])

    def test_an_empty_table_fails_before_a_service_stops(self):
        self.rows = [['0']]
        with self.assertRaisesRegex(client.Failed, 'is empty'):
            upgrade_phases.upgrade_control(self.upgrade)
        self.stop_all.assert_not_called()

    def test_attach_mode_before_sync_fails_before_a_service_stops(self):
        self.columns_before['mae_nova.shadow_block_device_mapping'] = True
        with self.assertRaisesRegex(
                client.Failed, r"\['mae_nova.shadow_block_device_mapping'\] "
                'have attach_mode before db sync'):
            upgrade_phases.upgrade_control(self.upgrade)
        self.stop_all.assert_not_called()

    def test_no_attach_mode_after_sync_fails(self):
        self.columns_after['mae_nova.shadow_block_device_mapping'] = False
        with self.assertRaisesRegex(
                client.Failed, r"\['mae_nova.shadow_block_device_mapping'\] "
                'have no attach_mode after db sync'):
            upgrade_phases.upgrade_control(self.upgrade)

    def test_an_alembic_head_the_sync_left_fails(self):
        self.alembic_head.side_effect = ['before', 'before']
        with self.assertRaisesRegex(client.Failed,
                                    'the alembic head stayed before'):
            upgrade_phases.upgrade_control(self.upgrade)

    def test_a_server_no_longer_active_fails(self):
        self.tracker.servers = ['s1']
        self.tracker.cloud.servers.return_value = [{'id': 's1',
                                                    'status': 'ERROR'}]
        with self.assertRaisesRegex(client.Failed, 's1 is ERROR'):
            upgrade_phases.upgrade_control(self.upgrade)

    def test_disks_changed_by_the_upgrade_fail(self):
        self.tracker.servers = ['s1']
        self.tracker.cloud.servers.return_value = [{'id': 's1',
                                                    'status': 'ACTIVE'}]
        self.tracker.cloud.attachments.return_value = [
            {'volumeId': 'v', 'device': '/dev/vdc'}]
        self.upgrade.before_upgrade = {'s1': [('v', '/dev/vdb')]}
        with self.assertRaisesRegex(client.Failed, 'the disks changed'):
            upgrade_phases.upgrade_control(self.upgrade)

    def test_an_existing_row_with_a_mode_fails(self):
        self.modes = [[None], ['rw']]
        with self.assertRaisesRegex(client.Failed,
                                    'existing rows have attach_mode'):
            upgrade_phases.upgrade_control(self.upgrade)


class MixedTest(PhaseTestCase):

    def setUp(self):
        self.patch(attachment_checks, 'check_views',
                   return_value='views checked')
        self.tracker = mock.Mock()
        self.tracker.servers = ['server-a', 'server-b']
        self.upgrade = upgrade_phases.Upgrade(self.tracker)
        self.upgrade.shelved = 'shelved'
        refusal = reply(409, upgrade_phases.NOT_YET_UPGRADED)
        self.tracker.cloud.attach.return_value = refusal
        self.tracker.cloud.create_servers.return_value = refusal

    def test_the_series_refusals_pass(self):
        self.assertTrue(upgrade_phases.mixed(self.upgrade).startswith(
            'ro attach to the server on mae-compute-b: 409, '
            'ro attach to the server on mae-compute-a: 409, '
            'multi-create of 2 with an ro root: 409; '))

    def test_an_ro_attach_refused_for_another_cause_fails(self):
        self.tracker.cloud.attach.return_value = reply(409, 'Locked')
        with self.assertRaisesRegex(
                client.Failed, 'ro attach to the server on mae-compute-b: '
                'expected 409 saying'):
            upgrade_phases.mixed(self.upgrade)

    def test_a_refusal_that_left_something_fails(self):
        # The first refusal left an attachment behind.
        self.tracker.snapshot.side_effect = ['before', 'after']
        with self.assertRaisesRegex(client.Failed,
                                    'something was left behind'):
            upgrade_phases.mixed(self.upgrade)

    def test_a_multi_create_refused_for_another_cause_fails(self):
        self.tracker.cloud.create_servers.return_value = reply(409, 'Locked')
        with self.assertRaisesRegex(
                client.Failed, 'multi-create of 2 with an ro root: '
                'expected 409 saying'):
            upgrade_phases.mixed(self.upgrade)


def two_servers():
    """A real Tracker of servers a (on compute-a) and b (on compute-b),
    each with its root rw, over a mocked cloud.
    """
    tracker = Tracker(mock.Mock(), UpgradeReport())
    tracker.servers = ['a', 'b']
    for server_id, host in (('a', 'mae-compute-a'), ('b', 'mae-compute-b')):
        tracker.ledger.place(server_id, host)
        tracker.ledger.attach(server_id, f'{server_id}-root', 'rw', 'rw')
    tracker.cloud.server.return_value = {'status': 'ACTIVE'}
    return tracker


class UpgradeHostBTest(PhaseTestCase):
    """The host-b-upgraded phase: host B on the series, an ro attach on both
    hosts, checked with the guests' boot ids kept, the ro server live-migrated.
    """

    def setUp(self):
        self.check_views = self.patch(attachment_checks, 'check_views',
                                      return_value='views checked')
        self.patch(services, 'compute')
        self.patch(releases, 'set_release')
        self.patch(upgrade_phases, 'start_services')
        self.patch(upgrade_phases, 'restart_services')
        self.patch(upgrade_phases, 'wait_computes_up')
        self.patch(databases, 'compute_versions')
        self.patch(releases, 'release_of', return_value=releases.SERIES)
        self.tracker = two_servers()
        self.tracker.new_volume = mock.Mock(return_value='ro-volume')
        self.patch(self.tracker, 'slot_region')
        self.patch(tracker_module.probes, 'slot_in_region')

    def test_ro_on_both_hosts_checked_with_the_guests_kept(self):
        # Where the ledger has server a at each check.
        placed = []
        self.check_views.side_effect = lambda *args, **kwargs: placed.append(
            self.tracker.ledger.hosts['a'])
        upgrade_phases.upgrade_host_b(upgrade_phases.Upgrade(self.tracker))
        self.assertEqual(['mae-compute-a', 'mae-compute-b', 'mae-compute-a'],
                         placed)
        # Cinder's series records the mode of the migrated attachments.
        self.assertEqual({}, self.tracker.ledger.recorded)
        self.assertEqual('ro', self.tracker.ledger.mode('a', 'ro-volume'))
        self.assertEqual('ro', self.tracker.ledger.mode('b', 'ro-volume'))
        self.assertEqual(
            [upgrade_phases.KEPT] * 3,
            [call.kwargs.get('guest_restart') or call.args[2]
             for call in self.check_views.call_args_list])

    def test_a_view_that_disagrees_fails_the_phase(self):
        self.check_views.side_effect = client.Failed('qemu_ro=False')
        with self.assertRaisesRegex(client.Failed, 'qemu_ro=False'):
            upgrade_phases.upgrade_host_b(
                upgrade_phases.Upgrade(self.tracker))


class RollbackTest(PhaseTestCase):
    """The rollback phase: the read-only attachments the upgrade made detached,
    the packagers' SQL, 34.0.0 everywhere.
    """

    def setUp(self):
        self.tracker = two_servers()
        for server_id in ('a', 'b'):
            self.tracker.ledger.attach(server_id, 'ro-volume', 'ro', 'ro')
            self.tracker.baseline[server_id, 'ro-volume'] = 'slot'
        self.listed = {'mae_nova': [['a', 'ro-volume'], ['b', 'ro-volume']],
                       'mae_nova_cell0': []}
        self.queries = []
        self.kept = set()
        self.patch(databases, 'query', side_effect=self.query)
        self.patch(attachment_checks, 'check_views',
                   return_value='views checked')
        self.stop_all = self.patch(services, 'stop_all')
        self.patch(services, 'all_services', return_value=[])
        self.patch(releases, 'set_release')
        self.patch(databases, 'sync_databases')
        self.patch(upgrade_phases, 'start_services')
        self.patch(upgrade_phases, 'wait_computes_up')
        self.patch(releases, 'release_of', return_value=releases.PRISTINE)

    def query(self, database, sql):
        self.queries.append((database, sql))
        if sql == databases.READ_ONLY_BDMS:
            # A detach removes the row, unless Nova kept it.
            attached = set(self.tracker.ledger.modes) | self.kept
            return [row for row in self.listed[database]
                    if tuple(row) in attached]
        return []

    def test_the_read_only_attachments_made_are_detached(self):
        detail = upgrade_phases.rollback(upgrade_phases.Upgrade(self.tracker))
        self.assertIn('the 2 read-only attachments the upgrade made', detail)
        self.assertEqual([mock.call('a', 'ro-volume'),
                          mock.call('b', 'ro-volume')],
                         self.tracker.cloud.detach.call_args_list)
        self.assertEqual({('a', 'a-root'), ('b', 'b-root')},
                         set(self.tracker.ledger.modes))
        # Live-migrated on 34.0.0 and 29.0.0: Cinder records no mode.
        self.assertEqual({('a', 'a-root'): 'null'},
                         self.tracker.ledger.recorded)

    def test_a_read_only_row_the_upgrade_did_not_make_fails_first(self):
        self.listed['mae_nova'].append(['c', 'ro-volume'])
        self.tracker.ledger.attach('c', 'ro-volume', 'ro', 'ro')
        del self.tracker.ledger.requested['c', 'ro-volume']
        self.tracker.ledger.requested['c', 'ro-volume'] = 'rw'
        with self.assertRaisesRegex(client.Failed, 'not the ones the '
                                    'upgrade made'):
            upgrade_phases.rollback(upgrade_phases.Upgrade(self.tracker))
        self.tracker.cloud.detach.assert_not_called()
        self.stop_all.assert_not_called()

    def test_one_the_databases_do_not_list_fails_first(self):
        self.listed['mae_nova'].pop()
        with self.assertRaisesRegex(client.Failed, 'not the ones the '
                                    'upgrade made'):
            upgrade_phases.rollback(upgrade_phases.Upgrade(self.tracker))
        self.tracker.cloud.detach.assert_not_called()

    def test_a_read_only_row_left_after_the_detach_fails(self):
        self.kept = {('a', 'ro-volume')}
        with self.assertRaisesRegex(client.Failed, r"read-only attachments "
                                    r"left: \[\['a', 'ro-volume'\]\]"):
            upgrade_phases.rollback(upgrade_phases.Upgrade(self.tracker))
        self.stop_all.assert_not_called()

    def test_a_server_not_active_after_the_rollback_fails(self):
        self.tracker.cloud.server.return_value = {'status': 'ERROR'}
        with self.assertRaisesRegex(client.Failed, 'a is ERROR'):
            upgrade_phases.rollback(upgrade_phases.Upgrade(self.tracker))

    def test_the_control_versions_are_cleared_after_the_rollback_sql(self):
        upgrade_phases.rollback(upgrade_phases.Upgrade(self.tracker))
        for database in databases.CELL_DATABASES:
            statements = [sql for name, sql in self.queries
                          if name == database]
            self.assertLess(
                statements.index(databases.ROLLBACK_SQL),
                statements.index(databases.FORGET_CONTROL_VERSIONS))


if __name__ == '__main__':
    unittest.main()
