"""Tests of series.cloud.attach_steps that need no cloud: step 12 holds
each volume's whole RBD image against what may have written it.
"""

import unittest
from unittest import mock

from series.cloud import attach_steps
from series.cloud.client import Failed
from series.cloud import probes
from series.cloud.tracker import Tracker


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
