"""Tests of series.cloud.move_steps that need no cloud: a volume made
for a move is attached in its mode and checked with the guest running
on.
"""

import unittest
from unittest import mock

from series.cloud import attachment_checks
from series.cloud import move_steps
from series.cloud.tracker import Tracker


class AttachNewVolumeTest(unittest.TestCase):

    def test_a_single_attach_volume_attached_and_checked(self):
        made = Tracker(mock.Mock())
        made.new_volume = mock.Mock(return_value='v1')
        made.attach = mock.Mock()
        with mock.patch.object(attachment_checks,
                               'check_views') as check_views:
            self.assertEqual('v1', move_steps.attach_new_volume(
                made, 's1', 'live-rw', 'rw'))
        made.new_volume.assert_called_once_with('live-rw', multiattach=False)
        made.attach.assert_called_once_with('s1', 'v1', 'rw')
        check_views.assert_called_once_with(made, ['s1'],
                                            guest_restart='kept')


if __name__ == '__main__':
    unittest.main()
