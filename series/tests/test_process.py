import os
from pathlib import Path
import subprocess
import sys
import unittest

from series import process

AUTOGROUP = Path('/proc/self/autogroup')
# The kernel prints nothing there for a process in a CPU cgroup of its
# own (as in a container): autogroups then play no part.
REPORT = ('import os, pathlib\n'
          'print(os.nice(0))\n'
          'group = pathlib.Path("/proc/self/autogroup")\n'
          'words = group.read_text().split() if group.exists() else []\n'
          'print(words[-1] if words else "-")\n')


def own_autogroup_nice():
    words = AUTOGROUP.read_text().split() if AUTOGROUP.exists() else []
    return words[-1] if words else '-'


class BackgroundTest(unittest.TestCase):

    def run_reporting(self, command):
        return subprocess.run(command, start_new_session=True, text=True,
                              stdout=subprocess.PIPE,
                              check=True).stdout.split()

    def test_the_command_and_its_session_are_reniced(self):
        before = own_autogroup_nice()
        nice, group = self.run_reporting(
            process.background([sys.executable, '-c', REPORT]))
        self.assertEqual(int(nice),
                         min(os.nice(0) + process.BACKGROUND_NICE, 19))
        if before != '-':
            self.assertEqual(group, str(process.BACKGROUND_NICE))
        # The session that started it keeps its priority.
        self.assertEqual(own_autogroup_nice(), before)

    def test_without_it_nothing_is_reniced(self):
        nice, group = self.run_reporting([sys.executable, '-c', REPORT])
        self.assertEqual(int(nice), os.nice(0))
        self.assertNotEqual(group, str(process.BACKGROUND_NICE))

    def test_the_arguments_reach_the_command(self):
        out = subprocess.run(process.background(['echo', 'a b', 'c']),
                             text=True, stdout=subprocess.PIPE,
                             start_new_session=True, check=True).stdout
        self.assertEqual(out, 'a b c\n')
