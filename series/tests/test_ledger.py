"""Tests of series.cloud.ledger: observe() reads every row Nova, Cinder
and libvirt hold; compare() fails each observation that disagrees with
what the scenario made, and passes the one that agrees.
"""

import subprocess
import unittest
from unittest import mock

from series.cloud import hosts
from series.cloud import ledger
from series import config

A, B = 'mae-compute-a', 'mae-compute-b'


def made():
    """Two servers on two hosts sharing a volume, one ro, one rw."""
    book = ledger.Ledger()
    book.place('s1', A)
    book.place('s2', B)
    book.attach('s1', 'v', 'ro', 'ro')
    book.attach('s2', 'v', 'rw', 'rw')
    return book


def agreeing():
    return {'servers': {'s1': A, 's2': B},
            'nova': [{'server': 's1', 'volume': 'v', 'api_mode': 'ro'},
                     {'server': 's2', 'volume': 'v', 'api_mode': 'rw'}],
            'cinder': [{'server': 's1', 'volume': 'v', 'mode': 'ro',
                        'status': 'attached', 'host': A},
                       {'server': 's2', 'volume': 'v', 'mode': 'rw',
                        'status': 'attached', 'host': B}],
            'domains': {A: ['s1'], B: ['s2']}}


class CompareTest(unittest.TestCase):

    def problems(self, change=None, book=None):
        seen = agreeing()
        if change:
            change(seen)
        return ledger.compare((book or made()).expected(), seen)

    def test_agreeing_observation_passes(self):
        self.assertEqual([], self.problems())

    def test_an_attachment_a_move_dropped(self):
        def dropped(seen):
            del seen['nova'][1]
            del seen['cinder'][1]
        self.assertEqual(['Nova has no attachment of v to s2',
                          'Cinder has no attachment of v to s2'],
                         self.problems(dropped))

    def test_an_attachment_the_scenario_did_not_make(self):
        def extra(seen):
            seen['nova'].append({'server': 's1', 'volume': 'w',
                                 'api_mode': 'rw'})
        self.assertEqual(['Nova has an attachment of w to s1 that the '
                          'scenario did not make'], self.problems(extra))

    def test_a_duplicated_cinder_record(self):
        def twice(seen):
            seen['cinder'].append(dict(seen['cinder'][0]))
        self.assertEqual(['Cinder has 2 attachments of v to s1'],
                         self.problems(twice))

    def test_nova_showing_another_mode(self):
        def other(seen):
            seen['nova'][0]['api_mode'] = 'rw'
        self.assertEqual(['Nova: the attachment of v to s1 shows rw, not ro'],
                         self.problems(other))

    def test_cinder_recording_another_mode_status_or_host(self):
        def wrong(seen):
            seen['cinder'][0].update(mode='rw', status='attaching', host=B)
        self.assertEqual(
            ['Cinder: the attachment of v to s1 records rw, not ro',
             'Cinder: the attachment of v to s1 is attaching, not attached',
             f'Cinder: the attachment of v to s1 is attached on {B}, not '
             f'{A}'], self.problems(wrong))

    def test_a_server_elsewhere_than_put(self):
        def moved(seen):
            seen['servers']['s1'] = B
            seen['domains'] = {A: [], B: ['s1', 's2']}
        self.assertEqual([f'server s1 is on {B}, not {A}',
                          f"the domain of s1 is on ['{B}'], not {A}"],
                         self.problems(moved))

    def test_a_domain_left_on_the_source(self):
        def left(seen):
            seen['domains'][B].append('s1')
        self.assertEqual([f"the domain of s1 is on ['{A}', '{B}'], not {A}"],
                         self.problems(left))

    def test_a_domain_of_no_server_of_the_scenario(self):
        def stray(seen):
            seen['domains'][A].append('domain instance-0000002a')
        self.assertEqual([f'{A} runs domain instance-0000002a, of no server '
                          'of the scenario'], self.problems(stray))

    def test_the_ledger_follows_the_scenario(self):
        book = made()
        book.detach('s2', 'v')
        seen = agreeing()
        self.assertEqual(['Nova has an attachment of v to s2 that the '
                          'scenario did not make',
                          'Cinder has an attachment of v to s2 that the '
                          'scenario did not make'],
                         ledger.compare(book.expected(), seen))
        book.remove('s2')
        self.assertEqual({'s1': A}, book.expected()['servers'])
        self.assertEqual(
            [{'server': 's1', 'volume': 'v', 'mode': 'ro', 'api_mode': 'ro',
              'host': A, 'status': 'attached', 'record_mode': 'ro'}],
            book.expected()['attachments'])


def offloaded():
    """s2 of made() shelved-offloaded: no host, no domain, its volume
    kept by a reservation Cinder records without a mode.
    """
    book = made()
    book.offload('s2', 'null')
    seen = agreeing()
    seen['servers']['s2'] = None
    seen['domains'][B] = []
    seen['cinder'][1].update(mode='null', status='reserved', host=None)
    return book, seen


class OffloadedTest(unittest.TestCase):

    def test_a_shelved_offloaded_server_as_nova_and_cinder_keep_it(self):
        book, seen = offloaded()
        self.assertEqual([], ledger.compare(book.expected(), seen))

    def test_its_volume_dropped_while_offloaded(self):
        book, seen = offloaded()
        del seen['nova'][1]
        del seen['cinder'][1]
        self.assertEqual(['Nova has no attachment of v to s2',
                          'Cinder has no attachment of v to s2'],
                         ledger.compare(book.expected(), seen))

    def test_a_domain_or_an_attached_record_left_behind(self):
        book, seen = offloaded()
        seen['domains'][B] = ['s2']
        seen['cinder'][1].update(mode='rw', status='attached', host=B)
        self.assertEqual(
            [f"the domain of s2 is on ['{B}'], not none",
             'Cinder: the attachment of v to s2 records rw, not null',
             'Cinder: the attachment of v to s2 is attached, not reserved',
             f'Cinder: the attachment of v to s2 is attached on {B}, not '
             'None'], ledger.compare(book.expected(), seen))

    def test_a_mode_cinder_records_other_than_the_disks(self):
        book, seen = made(), agreeing()
        book.records('s2', 'null')
        self.assertEqual(['Cinder: the attachment of v to s2 records rw, not '
                          'null'], ledger.compare(book.expected(), seen))
        seen['cinder'][1]['mode'] = 'null'
        self.assertEqual([], ledger.compare(book.expected(), seen))
        book.records('s2', None)
        self.assertEqual({}, book.recorded)

    def test_placed_again_it_must_be_attached(self):
        book, seen = offloaded()
        book.place('s2', B)
        self.assertIn('Cinder: the attachment of v to s2 is reserved, not '
                      'attached', ledger.compare(book.expected(), seen))


class DuplicatingCloud:
    """s1 on A with the volume v attached twice (two Nova rows, two
    Cinder records), s2 on B with v attached once.
    """

    def server(self, server_id):
        return {'OS-EXT-SRV-ATTR:host': {'s1': A, 's2': B}[server_id],
                'OS-EXT-SRV-ATTR:instance_name': f'instance-{server_id}'}

    def attachments(self, server_id):
        modes = {'s1': ['ro', 'ro'], 's2': ['rw']}[server_id]
        return [{'volumeId': 'v', 'attach_mode': mode} for mode in modes]

    def volume(self, volume_id, admin=False):
        return {'attachments': [
            {'attachment_id': 'a1', 'host_name': A},
            {'attachment_id': 'a2', 'host_name': A},
            {'attachment_id': 'a3', 'host_name': B}]}

    def cinder_attachments(self, volume_id):
        return [{'id': attachment, 'instance': server_id,
                 'attach_mode': mode, 'status': 'attached'}
                for attachment, server_id, mode in (
                    ('a1', 's1', 'ro'), ('a2', 's1', 'ro'),
                    ('a3', 's2', 'rw'))]


def virsh_listing(returncode=0):
    """A fake hosts.virsh listing instance-s1 on A, instance-s2 on B."""
    def virsh(host, *args, check=True):
        listed = {A: 'instance-s1\n', B: 'instance-s2\n'}[host.name]
        return subprocess.CompletedProcess(['virsh', *args], returncode,
                                           listed, 'cannot connect')
    return virsh


class ObserveTest(unittest.TestCase):

    def observe(self, virsh):
        with mock.patch.object(hosts.shutil, 'which',
                               return_value='/usr/bin/virsh'), \
                mock.patch.object(hosts, 'virsh', virsh):
            return ledger.observe(DuplicatingCloud(), ['s1', 's2'], ['v'])

    def test_every_row_observed_and_the_duplicates_found(self):
        seen = self.observe(virsh_listing())
        duplicated = agreeing()
        duplicated['nova'].insert(1, dict(duplicated['nova'][0]))
        duplicated['cinder'].insert(1, dict(duplicated['cinder'][0]))
        self.assertEqual(duplicated, seen)
        self.assertEqual(['Nova has 2 attachments of v to s1',
                          'Cinder has 2 attachments of v to s1'],
                         ledger.compare(made().expected(), seen))

    def test_a_libvirtd_not_answering_fails_the_observation(self):
        with self.assertRaisesRegex(config.SeriesError,
                                    f'{A}: virsh list failed'):
            self.observe(virsh_listing(returncode=1))
