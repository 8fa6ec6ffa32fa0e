"""Tests of series.cloud.tracker: report.json's and upgrade.json's
sections, and the record of what a run made and expects: each volume's
digest when made, the slot it held before an attachment began, which
volumes a guest may have written, the ledger.
"""

import unittest
from unittest import mock

from series.cloud import hosts
from series.cloud import probes
from series.cloud import tracker

# Slots are placed by the instance UUID.
SERVER = '6b4164b7-fd66-4758-a5c8-6a2f0c9e1d20'
SCENARIO_KEYS = ['hosts', 'servers', 'attachments', 'steps', 'volumes',
                 'faults', 'tempest', 'openstacksdk', 'openstackclient',
                 'gophercloud', 'cinder_csi', 'csi_sanity',
                 'seconds']


class ReportTest(unittest.TestCase):

    def test_report_json_holds_the_scenarios_sections(self):
        report = tracker.Report().to_json()
        self.assertEqual(SCENARIO_KEYS, list(report))
        self.assertEqual({host.name: {'libvirt_uri': host.uri,
                                      'address': host.address}
                          for host in hosts.HOSTS}, report['hosts'])
        self.assertIsNone(report['tempest'])
        self.assertIsNone(report['openstacksdk'])
        self.assertIsNone(report['openstackclient'])
        self.assertIsNone(report['cinder_csi'])
        self.assertIsNone(report['csi_sanity'])
        self.assertEqual([], report['steps'])

    def test_missing_bypass_rounds_only_once_there_are_some(self):
        report = tracker.Report()
        report.bypass_missing['s1'] = {'aa-1-vdb': 'insmod failed'}
        self.assertEqual({'s1': {'aa-1-vdb': 'insmod failed'}},
                         report.to_json()['bypass_missing'])

    def test_upgrade_json_adds_its_sections(self):
        report = tracker.UpgradeReport()
        self.assertEqual(SCENARIO_KEYS + ['versions', 'refusals',
                                          'database', 'phases', 'up_seconds',
                                          'series_again'],
                         list(report.to_json()))
        report.running['1'] = {'nova-api': {}}
        report.bypass_missing['s1'] = {'aa-1-vdb': 'insmod failed'}
        self.assertEqual({'1': {'nova-api': {}}},
                         report.to_json()['running'])
        self.assertIn('bypass_missing', report.to_json())

    def test_the_verdict_is_every_step_passed(self):
        report = tracker.Report()
        self.assertFalse(report.passed())
        report.steps = [{'step': 'swap', 'passed': True, 'detail': 'ok'}]
        self.assertTrue(report.passed())
        report.steps.append({'step': 'evacuate', 'passed': False,
                             'detail': 'Failed: ERROR'})
        self.assertEqual(['evacuate: Failed: ERROR'], report.failures())
        self.assertFalse(report.passed())

    def test_an_upgrade_passes_only_back_on_the_series(self):
        report = tracker.UpgradeReport(
            steps=[{'step': 'rollback', 'passed': True, 'detail': ''}])
        self.assertEqual(['back on the series: not tried: a phase failed'],
                         report.failures())
        report.series_again = 'ok'
        self.assertTrue(report.passed())
        report.steps[0]['passed'] = False
        # A failed phase is the failure; the series was not tried.
        report.series_again = 'not tried: a phase failed'
        self.assertEqual(['rollback: '], report.failures())

    def test_each_report_has_lists_of_its_own(self):
        first, second = tracker.Report(), tracker.Report()
        first.steps.append({'step': 1})
        self.assertEqual([], second.steps)


class FakeCloud:
    """The volumes and servers a tracker asks the cloud for."""

    def __init__(self):
        self.calls = []
        self.host = hosts.HOSTS[0].name

    def create_volume(self, name, multiattach, image):
        return {'id': f'id-{name}'}

    def rbd_image(self, volume_id):
        return f'image-{volume_id}'

    def attach(self, server_id, volume_id, mode):
        self.calls.append(('attach', server_id, volume_id, mode))

    def detach(self, server_id, volume_id):
        self.calls.append(('detach', server_id, volume_id))

    def host_of(self, server_id):
        return self.host

    def slot_of(self, server_id):
        return 7

    def volume(self, volume_id):
        return {'status': 'in-use', 'attachments': [
            {'attachment_id': 'b'}, {'attachment_id': 'a'}]}

    def servers(self, query):
        return [{'id': 'other', 'OS-EXT-SRV-ATTR:host': 'b',
                 'status': 'ERROR'},
                {'id': SERVER, 'OS-EXT-SRV-ATTR:host': 'a',
                 'status': 'ACTIVE'}]


class TrackerTest(unittest.TestCase):

    def setUp(self):
        self.made = tracker.Tracker(FakeCloud())
        region = bytes(probes.REGION_BYTES)
        for name, value in (('digests', lambda images: ['made']),
                            ('slot_region', lambda image, size: region)):
            patcher = mock.patch.object(probes, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def test_a_new_volume_is_recorded_unwritten(self):
        volume_id = self.made.new_volume('data')
        self.assertEqual('id-data', volume_id)
        self.assertEqual({'data': 'id-data'}, self.made.volumes)
        self.assertEqual({'id-data': ['made', None]}, self.made.written)
        self.assertEqual({'id-data': {'name': 'data', 'digest_made': 'made'}},
                         self.made.report.volumes)

    def test_only_an_rw_attachment_lets_a_guest_write(self):
        read_only = self.made.new_volume('ro')
        writable = self.made.new_volume('rw')
        self.made.attach(SERVER, read_only, 'ro')
        self.made.attach(SERVER, writable, 'rw')
        self.assertIsNone(self.made.written[read_only][1])
        self.assertEqual('rw', self.made.written[writable][1])
        self.assertEqual([('attach', SERVER, read_only, 'ro'),
                          ('attach', SERVER, writable, 'rw')],
                         self.made.cloud.calls)
        self.assertEqual('ro', self.made.ledger.mode(SERVER, read_only))
        self.assertEqual(probes.SLOT_BYTES,
                         len(self.made.baseline[SERVER, read_only]))

    def test_the_baseline_is_the_servers_own_slot(self):
        volume_id = self.made.new_volume('data')
        region = bytearray(probes.REGION_BYTES)
        start = 7 * probes.SLOT_BYTES
        region[start:start + probes.SLOT_BYTES] = b'7' * probes.SLOT_BYTES
        self.made.expect(SERVER, volume_id, 'ro', bytes(region))
        self.assertEqual(b'7' * probes.SLOT_BYTES,
                         self.made.baseline[SERVER, volume_id])

    def test_the_mode_asked_for_is_kept_apart(self):
        volume_id = self.made.new_volume('flag')
        self.made.expect(SERVER, volume_id, 'ro', bytes(probes.REGION_BYTES),
                         requested='rw')
        self.assertEqual('ro', self.made.ledger.mode(SERVER, volume_id))
        self.assertEqual('rw', self.made.ledger.requested[SERVER, volume_id])

    def test_a_detached_volume_is_forgotten(self):
        volume_id = self.made.new_volume('data')
        self.made.attach(SERVER, volume_id, 'rw')
        self.made.detach(SERVER, volume_id)
        self.assertEqual(('detach', SERVER, volume_id),
                         self.made.cloud.calls[-1])
        self.assertIsNone(self.made.ledger.mode(SERVER, volume_id))
        self.assertEqual({}, self.made.baseline)
        # What the guest wrote stays written.
        self.assertEqual('rw', self.made.written[volume_id][1])

    def test_placed_where_the_scheduler_put_it_or_the_step_did(self):
        self.made.placed(SERVER)
        self.made.placed('s2', hosts.HOSTS[1].name)
        self.assertEqual({SERVER: hosts.HOSTS[0].name,
                          's2': hosts.HOSTS[1].name}, self.made.ledger.hosts)

    def test_placements_are_of_the_runs_servers_only(self):
        self.made.servers = [SERVER]
        self.assertEqual({SERVER: 'a'}, self.made.placements())

    def test_the_other_host(self):
        self.assertEqual(hosts.HOSTS[1].name, self.made.other_host(SERVER))
        self.made.cloud.host = hosts.HOSTS[1].name
        self.assertEqual(hosts.HOSTS[0].name, self.made.other_host(SERVER))

    def test_a_snapshot_is_every_server_and_volume(self):
        self.made.new_volume('data')
        self.assertEqual(([(SERVER, 'ACTIVE'), ('other', 'ERROR')],
                          {'data': ('in-use', ['a', 'b'])}),
                         self.made.snapshot())


if __name__ == '__main__':
    unittest.main()
