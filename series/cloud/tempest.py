"""The scenario's step of upstream tempest (our series applied) against
the real cloud: the series' own tests (attach modes read back, the
guest's read-only disk seen from inside over SSH, a multi-create from
one read-only multiattach volume, an attach at 2.101), and the upstream
tests of what the series changes that no step of the scenario does: the
multiattach attachments listed and a server booted from a multiattach
volume, and the refusal of a second server for a volume without
multiattach (the Cinder series changes which reservations a volume
takes). Dynamic
credentials, every server with a port on the shared provider network,
SSH validation (series.cloud.network).

Left out on 2 cores, where each test boots its guests under TCG (about
25 of tempest's 30 minutes measured): the attach and detach tests with
a stop and start, the resize of a server with a multiattach volume, the
live and cold migration tests and the shelved attach tests, which the
scenario's steps (live migration both ways, resize confirmed and
reverted, shelve and unshelve, every one with read-only and read/write
attachments checked down to the guest) and the upgrade's cover; the
snapshot and swap tests, and the proxy volume APIs, which the series
does not touch.
"""

import json
import os
import re

from series.cloud import deploy
from series.cloud import hosts
from series.cloud import layout
from series.cloud import network
from series import config
from series import envs
from series import process
from series import queue
from series import suites

TESTS = (r'^tempest\.api\.compute\.volumes\.test_attach_volume_mode\.',
         r'^tempest\.api\.compute\.volumes\.test_attach_volume\.'
         r'AttachVolumeMultiAttachTest\.test_(list_get_volume_attachments_'
         r'multiattach|boot_from_multiattach_volume)\b',
         # tempest's series: an attach at 2.101 and later, no flag needed.
         r'^tempest\.api\.compute\.volumes\.test_attach_volume\.'
         r'AttachVolumeAsyncTestJSON\.',
         # Cinder's series changes which reservations a volume takes.
         r'^tempest\.api\.compute\.volumes\.test_attach_volume_negative\.'
         r'AttachVolumeNegativeTest\.test_attach_attached_volume_to_'
         r'different_server\b')
# stestr deals classes it has no timing for to its workers round robin.
# The first worker takes the tests below, the second every other
# selected test: about half of the tests' time each (benchmarks.rst).
FIRST_WORKER = (r'^tempest\.api\.compute\.volumes\.test_attach_volume_mode\.'
                r'AttachVolumeMode(Guest|MultiCreate)Test\.',
                r'^tempest\.api\.compute\.volumes\.test_attach_volume\.'
                r'AttachVolumeMultiAttachTest\.test_boot_from_multiattach_'
                r'volume\b')
# The series' own tests: each must have passed, none skipped.
SERIES_TESTS = tuple(
    'tempest.api.compute.volumes.test_attach_volume_mode.' + name + '.'
    for name in ('AttachVolumeModeTest', 'AttachVolumeModeGuestTest',
                 'AttachVolumeModeMultiCreateTest'))


def workers():
    """stestr's --worker-file (JSON is YAML): FIRST_WORKER's tests on one
    worker, every other on the second, so each selected test runs once.
    """
    rest = '^(?!' + '|'.join(regex.removeprefix('^')
                             for regex in FIRST_WORKER) + ')'
    return json.dumps([{'worker': list(FIRST_WORKER)}, {'worker': [rest]}],
                      indent=1)


def tempest_conf(session, image, flavors):
    password = layout.password()
    return f"""\
[DEFAULT]
log_file = {layout.log('tempest')}

[auth]
use_dynamic_credentials = true
# No routers or networks per test project: every server has a port on
# the shared provider network (fixed_network_name).
create_isolated_networks = false
admin_username = {layout.ADMIN}
admin_password = {password}
admin_project_name = admin
admin_domain_name = Default

[identity]
uri_v3 = {layout.url('keystone', '/v3')}
auth_version = v3
region = {layout.REGION}

[identity-feature-enabled]
api_v2 = false

[compute]
image_ref = {image}
image_ref_alt = {image}
flavor_ref = {flavors['mae.tiny']}
flavor_ref_alt = {flavors['mae.small']}
max_microversion = latest
build_timeout = 300
fixed_network_name = {network.NETWORK}
min_compute_nodes = {len(hosts.HOSTS)}

[compute-feature-enabled]
volume_multiattach = true
volume_attach_read_only = true
console_output = true
resize = true
cold_migration = true
live_migration = true
# Every disk is on Ceph (volumes, and images_type = rbd): nothing to copy.
block_migration_for_live_migration = false
volume_backed_live_migration = true
vnc_console = false
spice_console = false
serial_console = false
change_password = false
interface_attach = false
attach_encrypted_volume = false
snapshot = true
swap_volume = true

[volume]
catalog_type = block-storage
max_microversion = latest
volume_type_multiattach = {deploy.VOLUME_TYPE}
build_timeout = 300

[service_available]
nova = true
cinder = true
glance = true
neutron = true
swift = false

[validation]
# tempest logs in to the guests (the image with a config drive, from
# which they take their address and the key) from the bridge that holds
# the network's gateway: no floating IP, no security group (macvtap
# filters nothing).
run_validation = true
connect_method = fixed
network_for_ssh = {network.NETWORK}
image_ssh_user = root
security_group = false
security_group_rules = false
"""


def run(session):
    """Run the tests in a stestr repository of their own
    (suites.run_stestr); return the SuiteResult (series_tests_passed()).
    """
    project = config.get_project('tempest')
    queue.ensure_tree(project)
    python = envs.ensure_venv(project)
    image = next(image['id'] for image in session.get(
        'glance-api', f'/images?name={deploy.SSH_IMAGE}')['images'])
    flavors = {flavor['name']: flavor['id'] for flavor in session.get(
        'nova-api', '/flavors')['flavors']}
    directory = layout.directory() / 'tempest'
    directory.mkdir(parents=True, exist_ok=True)
    (directory / 'tempest.conf').write_text(
        tempest_conf(session, image, flavors))
    (directory / 'workers.yaml').write_text(workers())
    env = dict(os.environ, TEMPEST_CONFIG_DIR=str(directory),
               TEMPEST_CONFIG='tempest.conf', OS_TEST_TIMEOUT='900',
               PATH=f'{python.parent}{os.pathsep}{os.environ["PATH"]}')
    log = layout.log('tempest-run')
    process.say(f'scenario: tempest {project.version}: '
                f'{" ".join(TESTS)} (log: {log.relative_to(config.ROOT)})')

    def echo(line):
        if re.search(r'\.\.\. (FAILED|ok|SKIPPED)', line):
            process.say('  ' + line.strip()[:160])

    result = suites.run_stestr(
        python, project.tree, ['|'.join(TESTS)], name='tempest', log=log,
        env=env, run_options=['--worker-file', directory / 'workers.yaml'],
        repository=directory / 'stestr', listed=True, echo=echo)
    return series_tests_passed(result)


def series_tests_passed(result):
    """`result`, failed if a test of SERIES_TESTS did not pass."""
    for problem in suites.not_passed(result, SERIES_TESTS):
        result.fail(f"the series' test {problem}")
    return result
