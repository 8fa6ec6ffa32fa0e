"""Tests of series.cloud.faults that need no cloud: how the RabbitMQ
fault holds a live migration in its memory copy.
"""

import subprocess
import unittest
from unittest import mock

from series.cloud import faults
from series.cloud import hosts


def virsh_answering(job_types):
    """A fake hosts.virsh whose domjobinfo reports each of `job_types` in
    turn; the calls it got are in its `calls`.
    """
    answers = iter(job_types)
    calls = []

    def virsh(host, *args, check=True):
        calls.append(args)
        if args[0] == 'domjobinfo':
            return subprocess.CompletedProcess(
                args, 0, stdout=f'Job type:         {next(answers)}\n')
        return subprocess.CompletedProcess(args, 0, stdout='')
    virsh.calls = calls
    return virsh


class ThrottleMigrationTest(unittest.TestCase):

    def throttle(self, job_types):
        virsh = virsh_answering(job_types)
        with mock.patch.object(hosts, 'virsh', virsh):
            held = faults.throttle_migration(hosts.HOSTS[0], 'instance-1',
                                             faults.HELD_MIB_PER_SECOND)
        return held, virsh.calls

    def test_a_running_job_is_slowed_down(self):
        held, calls = self.throttle(['Unbounded', 'Unbounded'])
        self.assertTrue(held)
        self.assertIn(('migrate-setspeed', 'instance-1', '1'), calls)

    def test_no_job_yet_sets_no_speed(self):
        # Nova starts its job with an unlimited bandwidth: a speed set
        # before would not hold.
        held, calls = self.throttle(['None'])
        self.assertFalse(held)
        self.assertEqual([('domjobinfo', 'instance-1')], calls)

    def test_a_job_ending_meanwhile_is_not_held(self):
        held, _ = self.throttle(['Unbounded', 'None'])
        self.assertFalse(held)
