"""A scenario step: gophercloud's acceptance tests of volume attachments
(its series applied: the attach at 2.101, attach modes at 2.105, a
multi-create sharing a read-only root) against the real cloud, in its own
harness: `go test -tags acceptance` of its compute acceptance package,
configured by the OS_* variables it reads, as the admin (the tests that
pick a hypervisor or make a multiattach volume type need one).

The tests judge what the API and Cinder's attachment records say; what
the guests see of the same requests is the scenario's own steps' to
check.
"""

import os

from series.cloud import client
from series.cloud import content
from series.cloud import layout
from series.cloud import network
from series import config
from series import go_tests
from series import process
from series import queue

PACKAGE = './internal/acceptance/openstack/compute/v2'
TESTS = ('^(TestVolumeAttachAccepted|TestVolumeAttachReadOnlyOnTwoHypervisors'
         '|TestVolumeAttachModeRefusedBefore2105'
         '|TestBootFromMultiattachVolumeReadOnlyMultiCreate)$')
TAGS = ('acceptance',)
TIMEOUT = '30m'


def environment(cloud):
    """The OS_* variables of gophercloud's acceptance harness for the
    cloud's admin: credentials, the guest image, a flavor and another one
    for resizes, the network its servers take, the branch (master: the
    tests of 2.105 skip below it). OS_POOL_NAME and OS_EXTGW_ID, which
    the harness requires of every run, serve only floating IP tests: none
    of these uses them. Every other OS_* variable of this process is
    emptied, which the harness takes as unset.
    """
    inherited = {name: '' for name in os.environ if name.startswith('OS_')}
    return {**inherited,
            'OS_BRANCH': 'master',
            'OS_AUTH_URL': layout.url('keystone', '/v3'),
            'OS_USERNAME': layout.ADMIN,
            'OS_PASSWORD': layout.password(),
            'OS_PROJECT_NAME': 'admin',
            'OS_DOMAIN_NAME': 'Default',
            'OS_REGION_NAME': layout.REGION,
            'OS_IMAGE_ID': cloud.image(),
            'OS_FLAVOR_ID': cloud.flavor(content.FLAVORS[0][0]),
            'OS_FLAVOR_ID_RESIZE': cloud.flavor(content.FLAVORS[1][0]),
            'OS_NETWORK_NAME': network.NETWORK,
            'OS_POOL_NAME': network.NETWORK,
            'OS_EXTGW_ID': network.NETWORK}


def run(cloud=None):
    """Run the tests; return the SuiteResult."""
    project = config.get_project('gophercloud')
    queue.ensure_tree(project)
    log = layout.log('gophercloud-acceptance')
    process.say(f'scenario: gophercloud {project.version} acceptance tests '
                f'{TESTS} (log: {log.relative_to(config.ROOT)})')
    return go_tests.run_matching(
        project, PACKAGE, TESTS, 'gophercloud', TAGS,
        environment(cloud or client.Cloud()), log, TIMEOUT)
