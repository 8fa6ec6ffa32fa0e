"""Tests of series.cloud.attach_steps that need no cloud: step 11 takes
only the refusals it expects, each with nothing left behind; step 12
holds each volume's whole RBD image against what may have written it.
"""

import unittest
from unittest import mock

from series.cloud import attach_steps
from series.cloud.client import Failed
from series.cloud import probes
from series.cloud.rest import Response
from series.cloud.tracker import Tracker

# Each request step 11 makes, and the reply it expects: (status, text).
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


class RefusingCloud:
    """Nova and Cinder answering each of step 11's requests with
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
