"""A scenario step: upstream openstacksdk's functional tests of volume
attachments (its series applied, the attach mode tests among them) and
the cloud layer's tests of attach modes, against the real cloud, as its
devstack job runs them, with the cloud's clouds.yaml in place of
devstack's cloud names.
"""

import os

from series.cloud import content
from series.cloud import layout
from series import config
from series import process
from series import queue
from series import suites
from series import virtualenvs

TESTS = (r'^openstack\.tests\.functional\.'
         r'(compute\.v2\.test_volume_attachment\.'
         r'|cloud\.test_compute\.TestComputeVolumeAttachMode\.)')
# As its tox functional environment: the discovery imports every
# functional test module, the examples among them, which make a
# connection to OS_TEST_CLOUD at import time.
TEST_PATH = './openstack/tests/functional'
FLAVOR = content.FLAVORS[0][0]


def environment(clouds_yaml):
    """The variables that point the SDK's functional tests at the cloud,
    with the per-test timeout of its tox functional environment.
    """
    return {'OS_CLIENT_CONFIG_FILE': str(clouds_yaml),
            'OS_TEST_TIMEOUT': '600',
            'OS_CLOUD': 'mae-admin',
            'OS_TEST_CLOUD': 'mae-admin',
            'OPENSTACKSDK_DEMO_CLOUD': 'mae',
            'OPENSTACKSDK_DEMO_CLOUD_ALT': 'mae',
            'OPENSTACKSDK_OPERATOR_CLOUD': 'mae-admin',
            'OPENSTACKSDK_SYSTEM_ADMIN_CLOUD': 'mae-admin',
            'OPENSTACKSDK_IMAGE': content.IMAGE,
            'OPENSTACKSDK_FLAVOR': FLAVOR}


def run():
    """Run the tests in a stestr repository of their own
    (suites.run_stestr); return the SuiteResult.
    """
    project = config.get_project('openstacksdk')
    queue.ensure_tree(project)
    python = virtualenvs.ensure_venv(project)
    env = dict(os.environ, **environment(layout.clouds_yaml()),
               PATH=f'{python.parent}{os.pathsep}{os.environ["PATH"]}')
    log = layout.log('openstacksdk-functional')
    process.say(f'scenario: openstacksdk {project.version} functional '
                f'tests {TESTS} (log: {log.relative_to(config.ROOT)})')
    return suites.run_stestr(
        python, project.tree, [TESTS], name='openstacksdk', log=log, env=env,
        options=['--test-path', TEST_PATH], run_options=['--concurrency', '1'],
        repository=layout.directory() / 'openstacksdk' / 'stestr', listed=True)
