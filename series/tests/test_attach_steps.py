"""Tests of series.cloud.attach_steps that need no cloud: the multi-create step
needs every server created, attached once in Cinder and both hosts used; the
attach-modes step finds its volume by name and needs the modes asked for; the
refusals step takes only the refusals it expects, each with nothing left
behind; the rbd-images step holds each volume's whole RBD image against what
may have written it.
"""

import re
import unittest
from unittest import mock

from series.cloud import attach_steps
from series.cloud import attachment_checks
from series.cloud.client import Failed
from series.cloud import probes
from series.cloud.rest import Response
from series.cloud.tracker import Tracker

# Each request the refusals step makes, and the reply it expects:
# (status, text).
REFUSALS = {
    'attach at 2.104': (400, "Additional properties are not allowed "
                             "('attach_mode' was unexpected)"),
    'attach rx': (400, "Invalid input for field/attribute attach_mode. "
                       "Value: rx. 'rx' is not one of ['ro', 'rw']"),
    'create local': (400, 'Specifying an attach_mode is only supported '
                          'for volumes'),
    'create single': (400, 'Volume single is not multiattach: only '
                           'multiattach volumes can be shared'),
    'create lun': (400, 'Volume single cannot be attached read-only as a '
                        'lun device: only disk and cdrom devices can be '
                        'read-only.'),
    'rebuild': (409, 'Cannot rebuild: the volume is attached read-only'),
}


A, B = 'mae-compute-a', 'mae-compute-b'
SERVERS = ('s1', 's2', 's3', 's4')


def multi_creating_cloud(created=SERVERS, attached=SERVERS,
                         placed=(A, B, A, B)):
    """Nova making the servers `created` from the root volume, each on
    its host of `placed`, and Cinder listing an attachment of the root
    for each server of `attached`.
    """
    cloud = mock.Mock()
    cloud.reserved.return_value = list(created)
    cloud.volume.return_value = {'attachments': [
        {'server_id': server_id} for server_id in attached]}
    cloud.servers.return_value = [
        {'id': server_id, 'OS-EXT-SRV-ATTR:host': host}
        for server_id, host in zip(created, placed)]
    return cloud


class MultiCreateTest(unittest.TestCase):

    def multi_create(self, cloud):
        made = Tracker(cloud)
        made.new_volume = mock.Mock(return_value='v-root')
        made.slot_region = mock.Mock()
        made.expect = mock.Mock()
        return attach_steps.multi_create(made)

    def test_every_server_attached_once_on_both_hosts_passes(self):
        self.assertIn(f"on both hosts ({{'{A}': 2, '{B}': 2}})",
                      self.multi_create(multi_creating_cloud()))

    def test_fewer_servers_than_asked_for_fails(self):
        with self.assertRaisesRegex(Failed, '^3 servers of 4 created$'):
            self.multi_create(multi_creating_cloud(created=SERVERS[:3],
                                                   attached=SERVERS[:3]))

    def test_a_server_without_its_root_attachment_in_cinder_fails(self):
        with self.assertRaisesRegex(
                Failed, '^Cinder lists 3 attachments of the root, not one '
                'per server$'):
            self.multi_create(multi_creating_cloud(attached=SERVERS[1:]))

    def test_servers_all_on_one_host_fail(self):
        with self.assertRaisesRegex(
                Failed, f'^the 4 servers are all on {A}$'):
            self.multi_create(multi_creating_cloud(placed=[A] * 4))


class AttachModesTest(unittest.TestCase):

    def attach_modes(self, named=('v-data',), modes=('rw', 'ro', 'ro')):
        """The attach-modes step with the member's lookup by name finding
        the volumes `named` and Nova showing the first three servers' `modes`.
        """
        made = Tracker(mock.Mock())
        made.servers = list(SERVERS)
        made.new_volume = mock.Mock(return_value='v-data')
        made.attach = mock.Mock()
        made.cloud.member.get.return_value = {
            'volumes': [{'id': volume_id} for volume_id in named]}
        made.cloud.attached.side_effect = (
            lambda server_id, volume_id:
            {'attach_mode': dict(zip(SERVERS, modes))[server_id]})
        with mock.patch.object(attachment_checks, 'check_views',
                               return_value='checked'):
            detail = attach_steps.attach_modes(made)
        self.assertEqual([mock.call('s1', 'v-data', 'rw'),
                          mock.call('s2', 'v-data', 'ro'),
                          mock.call('s3', 'v-data', 'ro')],
                         made.attach.call_args_list)
        return detail

    def test_the_modes_asked_for_pass(self):
        self.assertTrue(self.attach_modes().endswith('rw, ro, ro; checked'))

    def test_a_lookup_by_name_finding_another_volume_too_fails(self):
        with self.assertRaisesRegex(Failed, re.escape(
                "the member looking mae-scenario-data up by name finds "
                "['v-data', 'v-other']")):
            self.attach_modes(named=('v-data', 'v-other'))

    def test_nova_showing_other_modes_fails(self):
        with self.assertRaisesRegex(Failed, re.escape(
                "GET at 2.105 shows ['rw', 'rw', 'ro']")):
            self.attach_modes(modes=('rw', 'rw', 'ro'))


class RefusingCloud:
    """Nova and Cinder answering each of the refusals step's requests with
    `replies` (REFUSALS by default); an attach that `leaves` attaches
    all the same.
    """

    def __init__(self, replies, leaves=False):
        self.replies = replies
        self.leaves = leaves
        self.attachments = []

    def reply(self, request):
        status, text = self.replies[request]
        return Response(status, {}, text)

    def image(self):
        return 'image'

    def servers(self, query):
        return [{'id': 's1', 'status': 'ACTIVE'}]

    def volume(self, volume_id):
        return {'status': 'available', 'attachments': [
            {'attachment_id': attachment}
            for attachment in self.attachments]}

    def attach(self, server_id, volume_id, mode, microversion=None,
               expect=202):
        if self.leaves:
            self.attachments.append('a1')
        return self.reply('attach at 2.104' if microversion == '2.104'
                          else f'attach {mode}')

    def create_servers(self, name, bdm, count=1, expect=202):
        return self.reply(f'create {name}')

    def action(self, server_id, body, expect=202):
        [name] = body
        return self.reply(name)


class RefusalsTest(unittest.TestCase):

    def refusals(self, replies=None, leaves=False):
        made = Tracker(RefusingCloud(dict(REFUSALS, **(replies or {})),
                                     leaves))
        made.servers = ['s1']
        made.new_volume = mock.Mock(
            side_effect=lambda name, **kwargs: made.volumes.setdefault(
                name, f'volume-{name}'))
        try:
            return attach_steps.refusals(made)
        except Failed as failure:
            return failure

    def test_the_expected_refusals_pass(self):
        self.assertEqual(
            'attach_mode at 2.104 400, attach_mode "rx" 400, local BDM '
            'with a mode 400, multi-create from a non-multiattach volume '
            '400, read-only lun 400, rebuild reimaging the ro root 409',
            self.refusals())

    def test_each_refusal_with_another_message_fails(self):
        for request, (status, _) in REFUSALS.items():
            with self.subTest(request):
                failure = self.refusals(
                    {request: (status, 'Server is locked')})
                self.assertIsInstance(failure, Failed)
                self.assertIn(f'got {status} Server is locked', str(failure))

    def test_each_refusal_with_another_status_fails(self):
        for request, (status, text) in REFUSALS.items():
            other = 409 if status == 400 else 400
            with self.subTest(request):
                failure = self.refusals({request: (other, text)})
                self.assertIsInstance(failure, Failed)
                self.assertIn(f'expected {status} saying', str(failure))

    def test_a_refusal_that_left_an_attachment_fails(self):
        failure = self.refusals(leaves=True)
        self.assertIsInstance(failure, Failed)
        self.assertEqual('attach_mode at 2.104: something was left behind',
                         str(failure))


class ImagesTest(unittest.TestCase):

    def images(self, written, digests):
        made = Tracker(mock.Mock())
        made.cloud.rbd_image.side_effect = lambda volume_id: volume_id
        for volume_id, (name, written_by) in written.items():
            made.written[volume_id] = ['made', written_by]
            made.report.volumes[volume_id] = {'name': name,
                                              'digest_made': 'made'}
        with mock.patch.object(probes, 'digests',
                               lambda images: [digests[image]
                                               for image in images]):
            try:
                return attach_steps.images(made), made.report.volumes
            except Failed as failure:
                return failure, made.report.volumes

    def test_each_image_as_what_may_have_written_it(self):
        detail, volumes = self.images(
            {'v1': ('root', None), 'v2': ('data', 'rw'),
             'v3': ('swapped', 'copy')},
            {'v1': 'made', 'v2': 'changed', 'v3': 'made'})
        self.assertEqual('never attached rw, RBD image unchanged: root; '
                         'attached rw, changed: data; copied by a migration '
                         'only: swapped', detail)
        self.assertEqual({'name': 'data', 'digest_made': 'made',
                          'digest_end': 'changed', 'written_by': 'rw',
                          'changed': True}, volumes['v2'])

    def test_an_image_changed_by_nothing_allowed_fails(self):
        failure, volumes = self.images({'v1': ('root', None)},
                                       {'v1': 'changed'})
        self.assertIsInstance(failure, Failed)
        self.assertIn('root (v1) changed although never attached rw',
                      str(failure))
        self.assertTrue(volumes['v1']['changed'])


if __name__ == '__main__':
    unittest.main()
