"""Tests of series.cloud.move_steps that need no cloud: a volume made
for a move is attached in its mode and checked with the guest running
on; each move has its guest checked as restarted or kept; a swap must
move the volume to the other pool and leave it ro in Nova and Cinder; an
evacuated host whose libvirtd does not answer, or that kept an evacuated
server's domain, fails the evacuation; a failed evacuation brings its
host back.
"""

import re
import subprocess
import unittest
from unittest import mock

from series.cloud import attachment_checks
from series.cloud.client import Failed
from series.cloud import hosts
from series.cloud import move_steps
from series.cloud import probes
from series.cloud import services
from series.cloud.tracker import Tracker
from series import config

A, B = 'mae-compute-a', 'mae-compute-b'
# nova-compute's line when it pauses server s3 for the copy of a disk.
PAUSED_LOG = ('2026-11-28 18:00:00.000 1 INFO nova.virt.libvirt.driver [-] '
              '[instance: s3] Pausing the guest while its read-only disk vdb '
              'is copied\n')


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
                                  side_effect=['pool-a', 'pool-b']), \
                mock.patch.object(move_steps, 'compute_log_size',
                                  return_value=0), \
                mock.patch.object(move_steps, 'compute_log_since',
                                  return_value=PAUSED_LOG):
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


class SwapTest(unittest.TestCase):
    """The swap step runs the guest throughout: Nova must have paused it
    for the copy of its read-only disk.
    """

    def swap(self, log_text=PAUSED_LOG, pools=('pool-a', 'pool-b'),
             mode='ro', records=(('s3', 'ro'),)):
        """The swap step with nova-compute logging `log_text`, the volume in
        the first of `pools` before the swap and in the second after,
        Nova showing it `mode` and Cinder's attachments `records`.
        """
        made = moving_tracker()
        made.cloud.attached.return_value = {'attach_mode': mode}
        made.cloud.cinder_attachments.return_value = [
            {'instance': server_id, 'attach_mode': record_mode}
            for server_id, record_mode in records]
        with mock.patch.object(attachment_checks, 'check_views',
                               return_value='checked'), \
                mock.patch.object(probes, 'pool_of',
                                  side_effect=list(pools)), \
                mock.patch.object(move_steps, 'compute_log_size',
                                  return_value=7) as size, \
                mock.patch.object(move_steps, 'compute_log_since',
                                  return_value=log_text) as since:
            result = move_steps.swap(made)
        host = hosts.by_name(A)
        size.assert_called_once_with(host)
        since.assert_called_once_with(host, 7)
        made.cloud.action.assert_not_called()
        return result

    def test_a_guest_paused_by_nova_for_the_copy_passes(self):
        self.assertIn('the guest paused by Nova for the copy',
                      self.swap(PAUSED_LOG))

    def test_a_guest_nova_did_not_pause_fails(self):
        for log_text in ('', PAUSED_LOG.replace('s3', 's2'),
                         PAUSED_LOG.replace('Pausing', 'Resuming')):
            with self.subTest(log_text):
                with self.assertRaisesRegex(
                        Failed,
                        'did not pause s3 for the copy'):
                    self.swap(log_text)

    def test_a_swap_that_left_the_volume_in_its_pool_fails(self):
        with self.assertRaisesRegex(
                Failed, '^the volume is still in the pool pool-a$'):
            self.swap(pools=('pool-a', 'pool-a'))

    def test_nova_showing_the_swapped_volume_rw_fails(self):
        with self.assertRaisesRegex(Failed, '^after the swap Nova shows rw$'):
            self.swap(mode='rw')

    def test_cinder_without_one_ro_attachment_after_the_swap_fails(self):
        for records in ((('s3', 'rw'),), (('s3', 'ro'), ('s3', 'ro')), ()):
            with self.subTest(records):
                with self.assertRaisesRegex(Failed, re.escape(
                        "Cinder's attachments after the swap: "
                        f"{list(records)}")):
                    self.swap(records=records)


class EvacuateTest(unittest.TestCase):

    def evacuate(self, virsh, checked='checked'):
        made = moving_tracker()
        # The host's forced down and its nova-compute's start, in order.
        self.calls = []
        made.cloud.force_down.side_effect = (
            lambda host, down: self.calls.append(('force_down', host, down)))
        # What check_views() records of the evacuated server.
        made.report.servers['s1'] = {'host': B, 'domain': 'instance-1'}
        with mock.patch.object(attachment_checks, 'check_views',
                               side_effect=[checked]) as check_views, \
                mock.patch.object(services, 'compute'), \
                mock.patch.object(services, 'start', side_effect=(
                    lambda *args, **kwargs: self.calls.append(('start',)))), \
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

    def test_another_server_s_domain_left_on_the_host_passes(self):
        detail, _ = self.evacuate(virsh_listing('instance-9\n'))
        self.assertIn('its stale domains removed', detail)

    def test_an_evacuated_server_s_domain_left_on_the_host_fails(self):
        with self.assertRaisesRegex(Failed, re.escape(
                f"{A} kept the domains ['instance-1'] of the evacuated "
                'servers after its nova-compute came back')):
            self.evacuate(virsh_listing('instance-1\n'))

    def test_a_failed_check_of_the_evacuated_servers_brings_the_host_back(
            self):
        with self.assertRaisesRegex(Failed, '^expected ro: rbd_changed$'):
            self.evacuate(virsh_listing(''),
                          checked=Failed('expected ro: rbd_changed'))
        # A service forced down never reports up: the forced down is
        # lifted before nova-compute is started and waited for.
        self.assertEqual([('force_down', A, True), ('force_down', A, False),
                          ('start',)], self.calls)

    def test_a_libvirtd_not_answering_at_the_power_loss_fails_first(self):
        # Its guests might still run: nothing may be evacuated.
        error, check_views = self.evacuate(virsh_listing('', returncode=1))
        self.assertIsInstance(error, config.SeriesError)
        self.assertIn(f'{A}: virsh list failed (exit 1): cannot connect',
                      str(error))
        check_views.assert_not_called()
        # The host comes back.
        self.assertEqual([('force_down', A, False), ('start',)], self.calls)

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
