"""The scenario's step of upstream tempest (our series applied) against
the real cloud: the series' own tests (attach modes read back, the
guest's read-only disk seen from inside over SSH, a multi-create from
one read-only multiattach volume with each guest's root disk seen
read-only over SSH, an attach at 2.101), and the upstream
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

The series' own options come from the gate job that runs its tests
upstream (JOB in Nova's .zuul.yaml, which Nova's series changes): what
the series adds to that job's tempest configuration is added to the
cloud's, and each of the series' tests that ran must be one the job
selects (its tempest_test_regex and tempest_exclude_regex).
"""

import json
import os
import re
import subprocess

from series.cloud import content
from series.cloud import hosts
from series.cloud import layout
from series.cloud import network
from series import config
from series import process
from series import queue
from series import suites
from series import virtualenvs

VOLUMES = 'tempest.api.compute.volumes.'
# The series' own tests.
SERIES_TESTS = tuple(
    f'{VOLUMES}test_attach_volume_mode.{name}.'
    for name in ('AttachVolumeModeTest', 'AttachVolumeModeGuestTest',
                 'AttachVolumeModeMultiCreateTest'))
# Upstream's tests of what the series changes that no step does.
UPSTREAM_TESTS = (
    f'{VOLUMES}test_attach_volume.AttachVolumeMultiAttachTest.'
    'test_list_get_volume_attachments_multiattach',
    f'{VOLUMES}test_attach_volume.AttachVolumeMultiAttachTest.'
    'test_boot_from_multiattach_volume',
    # tempest's series: an attach at 2.101 and later, no flag needed.
    f'{VOLUMES}test_attach_volume.AttachVolumeAsyncTestJSON.',
    # Cinder's series changes which reservations a volume takes.
    f'{VOLUMES}test_attach_volume_negative.AttachVolumeNegativeTest.'
    'test_attach_attached_volume_to_different_server')
# What the step runs, each test id prefix above (a class's, ending with
# a dot, or a test's): every one must run and pass, none skipped.
TESTS = tuple('^' + re.escape(prefix) + ('' if prefix.endswith('.')
                                         else r'\b')
              for prefix in SERIES_TESTS + UPSTREAM_TESTS)
# stestr deals classes it has no timing for to its workers round robin.
# The first worker takes the tests below, the second every other
# selected test: about half of the tests' time each (benchmarks.rst).
FIRST_WORKER = (r'^tempest\.api\.compute\.volumes\.test_attach_volume_mode\.'
                r'AttachVolumeMode(Guest|MultiCreate)Test\.',
                r'^tempest\.api\.compute\.volumes\.test_attach_volume\.'
                r'AttachVolumeMultiAttachTest\.test_boot_from_multiattach_'
                r'volume\b')
# The upstream job that runs the series' tests: the compute API tests
# with volume multiattach, tempest's "all" environment (slow tests too).
JOB = 'nova-next'
TEMPEST_CONFIG = '$TEMPEST_CONFIG'
# Reads a .zuul.yaml on standard input, writes JOB's vars as JSON (with
# the tempest virtualenv's PyYAML: the tool itself needs none).
READ_JOB = ('import json, sys, yaml; '
            'jobs = [entry["job"] for entry in yaml.safe_load(sys.stdin) '
            'if "job" in entry]; '
            'print(json.dumps(next(job for job in jobs '
            'if job["name"] == sys.argv[1]).get("vars", {})))')


def job_vars(python, zuul_yaml):
    """The vars of JOB in the text of a .zuul.yaml."""
    return json.loads(subprocess.run(
        [str(python), '-c', READ_JOB, JOB], input=zuul_yaml, text=True,
        stdout=subprocess.PIPE, check=True).stdout)


def nova_job(python):
    """(JOB's vars in Nova's work tree, JOB's vars in the release)."""
    tree = config.get_project('nova').tree
    pristine = subprocess.run(['git', 'show', 'base:.zuul.yaml'], cwd=tree,
                              text=True, stdout=subprocess.PIPE,
                              check=True).stdout
    return (job_vars(python, (tree / '.zuul.yaml').read_text()),
            job_vars(python, pristine))


def test_config(job):
    """{section: {option: value}} of a job's tempest configuration."""
    return (job.get('devstack_local_conf', {}).get('test-config', {})
            .get(TEMPEST_CONFIG, {}))


def series_options(patched, pristine):
    """What the series adds to or changes in the job's tempest
    configuration, {section: {option: value}}.
    """
    before = test_config(pristine)
    added = {}
    for section, options in test_config(patched).items():
        changed = {option: value for option, value in options.items()
                   if before.get(section, {}).get(option, object()) != value}
        if changed:
            added[section] = changed
    return added


def options_text(options):
    """`options` as tempest.conf sections (oslo.config merges a section
    given twice).
    """
    text = ''
    for section, values in sorted(options.items()):
        text += f'\n[{section}]\n' + ''.join(
            f'{option} = {value}\n'
            for option, value in sorted(values.items()))
    return text


def job_selects(job, test):
    """Whether the job runs `test` (an id without its attributes), as
    tempest run's --regex and --exclude-regex choose.
    """
    regex = job.get('tempest_test_regex', '')
    exclude = job.get('tempest_exclude_regex', '')
    return bool(re.search(regex, test)) and not (
        exclude and re.search(exclude, test))


def workers():
    """stestr's --worker-file (JSON is YAML): FIRST_WORKER's tests on one
    worker, every other on the second, so each selected test runs once.
    """
    rest = '^(?!' + '|'.join(regex.removeprefix('^')
                             for regex in FIRST_WORKER) + ')'
    return json.dumps([{'worker': list(FIRST_WORKER)}, {'worker': [rest]}],
                      indent=1)


def identity_sections():
    """tempest.conf's log file and how tempest authenticates: dynamic
    credentials, made by the cloud's admin in Keystone.
    """
    return f"""\
[DEFAULT]
log_file = {layout.log('tempest')}

[auth]
use_dynamic_credentials = true
# No routers or networks per test project: every server has a port on
# the shared provider network (fixed_network_name).
create_isolated_networks = false
admin_username = {layout.ADMIN}
admin_password = {layout.password()}
admin_project_name = admin
admin_domain_name = Default

[identity]
uri_v3 = {layout.url('keystone', '/v3')}
auth_version = v3
region = {layout.REGION}

[identity-feature-enabled]
api_v2 = false
"""


def compute_sections(image, flavors):
    """tempest.conf's servers: booted from `image` with the flavors of
    `flavors` ({name: id}) on the compute hosts, and what Nova offers.
    """
    return f"""\
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
"""


def volume_and_service_sections():
    """tempest.conf's volumes (the multiattach volume type) and the
    services the cloud runs.
    """
    return f"""\
[volume]
catalog_type = block-storage
max_microversion = latest
volume_type_multiattach = {content.VOLUME_TYPE}
build_timeout = 300

[service_available]
nova = true
cinder = true
glance = true
neutron = true
swift = false
"""


def validation_section():
    """tempest.conf's way into the guests: SSH over the shared network."""
    return f"""\
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


def tempest_conf(session, image, flavors, job_options):
    """The cloud's tempest.conf, with `job_options` (series_options())
    last.
    """
    return '\n'.join([
        identity_sections(), compute_sections(image, flavors),
        volume_and_service_sections(), validation_section(),
        '# What the series adds to the tempest configuration of the '
        'upstream job\n'
        f"# that runs its tests ({JOB} in Nova's .zuul.yaml).\n",
    ]) + options_text(job_options)


def run(session):
    """Run the tests in a stestr repository of their own
    (suites.run_stestr); return the SuiteResult (series_tests_passed()).
    """
    project = config.get_project('tempest')
    queue.ensure_tree(project)
    python = virtualenvs.ensure_venv(project)
    image = next(image['id'] for image in session.get(
        'glance-api', f'/images?name={content.SSH_IMAGE}')['images'])
    flavors = {flavor['name']: flavor['id'] for flavor in session.get(
        'nova-api', '/flavors')['flavors']}
    directory = layout.directory() / 'tempest'
    directory.mkdir(parents=True, exist_ok=True)
    job, pristine_job = nova_job(python)
    job_options = series_options(job, pristine_job)
    (directory / 'tempest.conf').write_text(
        tempest_conf(session, image, flavors, job_options))
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
    return series_tests_passed(result, job)


def series_tests_passed(result, job):
    """`result`, failed if a test of SERIES_TESTS or UPSTREAM_TESTS did
    not run and pass (a skip fails), or a series' test is one the
    upstream job would not run.
    """
    for problem in suites.not_passed(result, SERIES_TESTS):
        result.fail(f"the series' test {problem}")
    for problem in suites.not_passed(result, UPSTREAM_TESTS):
        result.fail(f'the upstream test {problem}')
    for test in result.results:
        if test.startswith(SERIES_TESTS) and not job_selects(job, test):
            result.fail(f"the series' test {test} is not one {JOB} runs")
    return result
