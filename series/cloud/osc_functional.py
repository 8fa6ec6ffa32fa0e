"""A scenario step: upstream python-openstackclient's functional tests of
volume attach modes (its series applied) against the real cloud, as its
devstack job runs them: its `openstack` command, run by the tests with
no OS_* variable, reads the cloud's clouds.yaml from the configuration
directory (XDG_CONFIG_HOME/openstack).

The tests find devstack's resources by name: the admin cloud
(OS_ADMIN_CLOUD), a flavor m1.tiny or cirros256, an image cirros-*-disk,
the network private; `cloud up` makes the last three
(content.OSC_FLAVOR, content.OSC_IMAGE, network.NETWORK).
"""

import os
import shutil

from series.cloud import layout
from series import config
from series import process
from series import queue
from series import suites
from series import virtualenvs

TESTS = (r'^openstackclient\.tests\.functional\.compute\.v2\.test_server\.'
         r'ServerTests\.test_server_'
         r'(add_volume_with_attach_mode|create_with_block_device_attach_mode)')
# As its tox functional environment (OS_TEST_PATH).
TEST_PATH = './openstackclient/tests/functional'
ADMIN_CLOUD = 'mae-admin'


def config_home(clouds_yaml):
    """A configuration directory holding `clouds_yaml` where the
    `openstack` command looks for it; its path.
    """
    home = layout.directory() / 'python-openstackclient' / 'config'
    (home / 'openstack').mkdir(parents=True, exist_ok=True)
    shutil.copyfile(clouds_yaml, home / 'openstack' / 'clouds.yaml')
    (home / 'openstack' / 'clouds.yaml').chmod(0o600)
    return home


def environment(home):
    return {'OS_ADMIN_CLOUD': ADMIN_CLOUD, 'XDG_CONFIG_HOME': str(home)}


def run():
    """Run the tests in a stestr repository of their own
    (suites.run_stestr); return the SuiteResult.
    """
    project = config.get_project('python-openstackclient')
    queue.ensure_tree(project)
    python = virtualenvs.ensure_venv(project)
    home = config_home(layout.clouds_yaml())
    env = dict(os.environ, **environment(home),
               PATH=f'{python.parent}{os.pathsep}{os.environ["PATH"]}')
    log = layout.log('python-openstackclient-functional')
    process.say(f'scenario: python-openstackclient {project.version} '
                f'functional tests {TESTS} (log: '
                f'{log.relative_to(config.ROOT)})')
    return suites.run_stestr(
        python, project.tree, [TESTS], name='python-openstackclient',
        log=log, env=env, options=['--test-path', TEST_PATH],
        run_options=['--concurrency', '1'],
        repository=layout.directory() / 'python-openstackclient' / 'stestr',
        listed=True)
