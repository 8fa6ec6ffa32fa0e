"""A scenario step: upstream openstacksdk's functional tests of volume
attachments (its series applied, the attach mode tests among them)
against the real cloud, as its devstack job runs them, with the cloud's
clouds.yaml in place of devstack's cloud names.
"""

import os
import subprocess
import time

from series.cloud import deploy
from series.cloud import layout
from series.cloud import tempest
from series import config
from series import envs
from series import process
from series import queue
from series import suites

TESTS = r'^openstack\.tests\.functional\.compute\.v2\.test_volume_attachment\.'
# As its tox functional environment with OPENSTACKSDK_TESTS_SUBDIR: the
# discovery imports only the compute tests (the examples connect to a
# cloud named devstack-admin at import time).
TEST_PATH = './openstack/tests/functional/compute/v2'
FLAVOR = deploy.FLAVORS[0][0]


def environment(clouds_yaml):
    """The variables that point the SDK's functional tests at the cloud,
    with the per-test timeout of its tox functional environment.
    """
    return {'OS_CLIENT_CONFIG_FILE': str(clouds_yaml),
            'OS_TEST_TIMEOUT': '600',
            'OS_CLOUD': 'mae-admin',
            'OPENSTACKSDK_DEMO_CLOUD': 'mae',
            'OPENSTACKSDK_DEMO_CLOUD_ALT': 'mae',
            'OPENSTACKSDK_OPERATOR_CLOUD': 'mae-admin',
            'OPENSTACKSDK_SYSTEM_ADMIN_CLOUD': 'mae-admin',
            'OPENSTACKSDK_IMAGE': deploy.IMAGE,
            'OPENSTACKSDK_FLAVOR': FLAVOR}


def run():
    """Run the tests; return tempest.summary()'s dict."""
    project = config.get_project('openstacksdk')
    if not (project.tree / '.git').exists():
        queue.apply(project)
    python = envs.ensure_venv(project)
    env = dict(os.environ, **environment(deploy.clouds_yaml()),
               PATH=f'{python.parent}{os.pathsep}{os.environ["PATH"]}')
    log = layout.log('openstacksdk-functional')
    process.say(f'scenario: openstacksdk {project.version} functional '
                f'tests {TESTS} (log: {log.relative_to(config.ROOT)})')
    started = time.monotonic()
    skips = {}
    with open(log, 'w') as out:
        proc = subprocess.Popen(
            [str(python), '-m', 'stestr', '--test-path', TEST_PATH,
             'run', '--concurrency', '1',
             TESTS], cwd=project.tree, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            out.write(line)
            skip = tempest.skipped(line)
            if skip:
                skips[skip[0]] = skip[1]
        proc.wait()
    return tempest.summary(suites.read_subunit_results(python, project.tree),
                           skips, started)
