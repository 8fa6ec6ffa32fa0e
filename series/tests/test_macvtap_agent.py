"""Tests of series.cloud.macvtap_agent with the cloud virtualenv's
Neutron (CI runs this once the virtualenvs exist): a child forked after
the agent's hook is registered forgets every privsep client it
inherited, which its parent keeps.
"""

import subprocess
import unittest

from series.cloud import service_venv
from series import config

# Run with the agent's path as its argument.
CHILD = '''
import os
import runpy
import sys
agent = runpy.run_path(sys.argv[1], run_name='agent')
for context in agent['CONTEXTS']:
    context.channel = 'inherited'
os.register_at_fork(after_in_child=agent['forget_privsep_clients'])
pid = os.fork()
if pid == 0:
    os._exit(0 if all(context.channel is None
                      for context in agent['CONTEXTS']) else 1)
_, status = os.waitpid(pid, 0)
kept = all(context.channel == 'inherited' for context in agent['CONTEXTS'])
print(os.waitstatus_to_exitcode(status), kept, len(agent['CONTEXTS']))
'''


class ForgetPrivsepClientsTest(unittest.TestCase):

    def test_the_forked_worker_forgets_the_inherited_clients(self):
        python = service_venv.bin('python')
        if not python.exists():
            self.skipTest('no cloud virtualenv')
        path = config.ROOT / 'series' / 'cloud' / 'macvtap_agent.py'
        out = subprocess.run([str(python), '-c', CHILD, str(path)],
                             check=True, capture_output=True,
                             text=True).stdout
        self.assertEqual('0 True 6', out.split('\n')[-2])


if __name__ == '__main__':
    unittest.main()
