import os
from pathlib import Path
import subprocess
import sys
import unittest

from series import process

AUTOGROUP = Path('/proc/self/autogroup')
REPORT = ('import os, pathlib\n'
          'print(os.nice(0))\n'
          'group = pathlib.Path("/proc/self/autogroup")\n'
          'print(group.read_text().split()[-1] if group.exists() else "-")\n')


def own_autogroup_nice():
    return AUTOGROUP.read_text().split()[-1] if AUTOGROUP.exists() else '-'


class BackgroundTest(unittest.TestCase):

    def run_reporting(self, command):
        return subprocess.run(command, start_new_session=True, text=True,
                              stdout=subprocess.PIPE,
                              check=True).stdout.split()

    def test_the_command_and_its_session_are_reniced(self):
        before = own_autogroup_nice()
        nice, group = self.run_reporting(
            process.background([sys.executable, '-c', REPORT]))
        self.assertEqual(int(nice), os.nice(0) + process.BACKGROUND_NICE)
        if AUTOGROUP.exists():
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
