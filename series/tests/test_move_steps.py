"""Tests of series.cloud.move_steps that need no cloud: a volume made
for a move is attached in its mode and checked with the guest running
on; each move has its guest checked as restarted or kept; an evacuated
host whose libvirtd does not answer fails the evacuation.
"""

import subprocess
import unittest
from unittest import mock

from series.cloud import attachment_checks
from series.cloud import hosts
from series.cloud import move_steps
from series.cloud import probes
from series.cloud import services
from series.cloud.tracker import Tracker
from series import config

A, B = 'mae-compute-a', 'mae-compute-b'


def moving_cloud():
    """Nova doing whatever a move step asks: every server on A, back
    from a resize on its original flavor, the swapped volume ro.
    """
    cloud = mock.Mock()
    cloud.host_of.return_value = A
    cloud.wait_server.return_value = {'flavor': {'original_name':
                                                 'mae.small'}}
    cloud.servers.return_value = [{'id': 's1',
                                   'OS-EXT-SRV-ATTR:host': A}]
    cloud.attached.return_value = {'attach_mode': 'ro'}
    cloud.cinder_attachments.return_value = [{'instance': 's3',
                                              'attach_mode': 'ro'}]
    cloud.admin.get.return_value = {'migrations': [{'status':
                                                    'completed'}]}
    return cloud


def moving_tracker():
    made = Tracker(moving_cloud())
    made.servers = ['s0', 's1', 's2', 's3']
    made.volumes = {'live-rw': 'v-live', 'swapped': 'v-swapped'}
    made.new_volume = mock.Mock(return_value='v-new')
    made.written['v-new'] = ['made', None]
    made.attach = mock.Mock()
    made.detach = mock.Mock()
    return made


def virsh_listing(stdout, returncode=0):
    """A fake hosts.virsh whose `virsh list` prints `stdout`."""
    def virsh(host, *args, check=True):
        return subprocess.CompletedProcess(['virsh', *args], returncode,
                                           stdout, 'cannot connect')
    return virsh


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


class GuestRestartTest(unittest.TestCase):
    """What each move tells check_views of the guest: a new boot or the
    same one.
    """

    def guest_restarts(self, step):
        with mock.patch.object(attachment_checks, 'check_views',
                               return_value='checked') as check_views, \
                mock.patch.object(probes, 'pool_of',
                                  side_effect=['pool-a', 'pool-b']):
            step(moving_tracker())
        return [call.kwargs['guest_restart']
                for call in check_views.call_args_list]

    def test_a_hard_reboot_restarts_the_guest(self):
        self.assertEqual(['restarted'],
                         self.guest_restarts(move_steps.hard_reboot))

    def test_a_live_migration_keeps_the_guest(self):
        self.assertEqual(['kept'] * 3,
                         self.guest_restarts(move_steps.live_migration))

    def test_each_resize_restarts_the_guest(self):
        self.assertEqual(['restarted'] * 3,
                         self.guest_restarts(move_steps.cold_migration))

    def test_a_swap_keeps_the_guest(self):
        self.assertEqual(['kept'] * 2, self.guest_restarts(move_steps.swap))

    def test_a_reattach_keeps_the_guest(self):
        self.assertEqual(['kept'], self.guest_restarts(move_steps.reattach))

    def test_a_shelve_restarts_the_guest(self):
        self.assertEqual(['restarted'],
                         self.guest_restarts(move_steps.shelve))


class EvacuateTest(unittest.TestCase):

    def evacuate(self, virsh):
        made = moving_tracker()
        with mock.patch.object(attachment_checks, 'check_views',
                               return_value='checked') as check_views, \
                mock.patch.object(services, 'compute'), \
                mock.patch.object(services, 'start'), \
                mock.patch.object(hosts.shutil, 'which',
                                  return_value='/usr/bin/virsh'), \
                mock.patch.object(hosts, 'virsh', virsh):
            try:
                return move_steps.evacuate(made), check_views
            except config.SeriesError as error:
                return error, check_views

    def test_the_evacuated_guests_restarted_and_gone_from_the_host(self):
        detail, check_views = self.evacuate(virsh_listing(''))
        self.assertIn(f'1 servers evacuated to {B}: checked', detail)
        check_views.assert_called_once_with(mock.ANY, ['s1'],
                                            guest_restart='restarted')

    def test_a_libvirtd_not_answering_at_the_power_loss_fails_first(self):
        # Its guests might still run: nothing may be evacuated.
        error, check_views = self.evacuate(virsh_listing('', returncode=1))
        self.assertIsInstance(error, config.SeriesError)
        self.assertIn(f'{A}: virsh list failed (exit 1): cannot connect',
                      str(error))
        check_views.assert_not_called()

    def test_a_libvirtd_not_answering_after_the_evacuation_fails(self):
        answers = [virsh_listing(''), virsh_listing('', returncode=1)]

        def virsh(host, *args, check=True):
            listing = answers[0] if len(answers) == 1 else answers.pop(0)
            return listing(host, *args, check=check)
        error, check_views = self.evacuate(virsh)
        self.assertIsInstance(error, config.SeriesError)
        self.assertIn(f'{A}: virsh list failed (exit 1): cannot connect',
                      str(error))
        check_views.assert_called_once()


if __name__ == '__main__':
    unittest.main()
