"""A scenario step: csi-sanity's controller specs (kubernetes-csi's
csi-test, the version cloud-provider-openstack requires) against the
cinder-csi plugin with its series, on the real cloud.

The plugin's controller service runs as in the cinder-csi step. csi-sanity
also asks a node service for the node's id (NodeGetInfo), which cinder-csi
reads from the metadata service at 169.254.169.254: the node service runs
in a network namespace of its own, where that address is a stand-in that
serves one of the run's servers' id. csi-sanity's publishes then attach
real volumes to that server. Nothing of the node service but its identity
is used: csi-sanity's node specs, which stage and mount, are not run here
(series.cinder_csi_node stages on this machine's block devices).

csi-sanity expects a driver whose volumes are ready when a call returns.
Cinder changes a volume's state after the call that asked for it, and
released cinder-csi does not wait: the specs it fails for that are
skipped, each with why, and a spec's cleanup (csi-sanity unpublishes
and deletes its volumes after each spec) that fails only because Cinder
is still detaching or deleting the volume is recorded, not failed
(Kubernetes retries; csi-sanity does not). The volumes csi-sanity leaves are
deleted by the step.
"""

import json
from pathlib import Path
import tempfile

from series.cloud import cinder_csi_step
from series.cloud.client import check
from series.cloud import gophercloud_step
from series.cloud import layout
from series.cloud import rest
from series.cloud import services
from series import config
from series import go_module
from series import go_tests
from series import process
from series import queue

CSI_TEST = 'github.com/kubernetes-csi/csi-test/v5'
NAMESPACE = 'mae-csi-sanity'
METADATA_ADDRESS = '169.254.169.254'
CONTROLLER = 'csi-sanity-controller'
NODE = 'csi-sanity-node'
METADATA = 'csi-sanity-metadata'
FOCUS = 'Controller Service'
# The spec csi-sanity runs only when the driver advertises
# PUBLISH_READONLY (projects.toml requires it in process too).
REQUIRED = ('Controller Service [Controller Server] ControllerPublishVolume '
            'should fail when the volume is already published but is '
            'incompatible')
# csi-sanity's names its volumes so; cinder-csi names Cinder's volumes
# after them.
VOLUME_PREFIX = 'sanity-'
# The specs that fail against a real Cinder, always or on timing, in code
# of cinder-csi the series does not change (released cinder-csi v1.36.0
# fails them too). Skipped: {spec: why}.
SKIPPED = {
    'should fail when an invalid starting_token is passed':
        'cinder-csi answers ListVolumes with an invalid starting_token '
        'without an error, against a real Cinder',
    'should create volume from an existing source snapshot':
        'cinder-csi snapshots the new volume before Cinder has scheduled '
        'it ("volume is not assigned to a host")',
    'should create volume from an existing source volume':
        'cinder-csi clones the new volume before it is available',
    'check the presence of new volumes and absence of deleted ones in the '
    'volume list':
        'it deletes the volume CreateVolume has just returned and counts '
        "the project's volumes at once: Cinder has removed the volume by "
        'then only if it has no host yet, refuses the delete while a host '
        'creates it and deletes it after the call once it is available, '
        'so the count is a race with the scheduler; on a retry '
        'CreateVolume returns the volume the attempt before left (it has '
        'the same name) and the count does not grow (the plugin\'s '
        'in-process csi-sanity, on its fake cloud, runs the spec)',
}
# What Cinder (and cinder-csi) answer for a volume Cinder is still
# detaching or deleting: the only failures of a spec's cleanup that are
# not failures of the plugin.
CINDER_BUSY = ('Volume status must be available', 'its status is deleting')
CLEANUP_BUSY = 'cleanup found Cinder busy'
SANITY_SECONDS = 900
# csi-sanity deletes a volume as soon as CreateVolume returns, and
# cinder-csi returns before Cinder has made the volume available: Cinder
# then refuses the delete while a host creates the volume, now and then
# (cinder-csi with its series waits for such a volume before it attaches
# it, not before it deletes it). Kubernetes retries; so does the step, a
# spec at most ATTEMPTS times, and says which passed only on a retry.
ATTEMPTS = 3


def build():
    """csi-sanity, built in the plugin's work tree: of the csi-test
    release its go.mod requires. Its binary.
    """
    project = config.get_project(cinder_csi_step.PROJECT)
    tree = go_tests.workspace(project, queue.ensure_tree(project))
    binary = go_module.cache_directory() / 'bin' / 'csi-sanity'
    go_module.go('build', '-o', binary, f'{CSI_TEST}/cmd/csi-sanity',
                 cwd=tree)
    return binary


def metadata_files(directory, server_id):
    """The metadata stand-in's files: meta_data.json naming `server_id`
    at each version cinder-csi asks for.
    """
    for version in ('latest', '2012-08-10'):
        path = Path(directory) / 'openstack' / version / 'meta_data.json'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({'uuid': server_id,
                                    'name': 'csi-sanity-node'}))


def in_namespace(*command):
    return ('ip', 'netns', 'exec', NAMESPACE, *command)


def namespace(action):
    process.run(['ip', 'netns', action, NAMESPACE],
                check=action == 'add')


def metadata_served(server_id):
    """Whether the stand-in serves `server_id` in the namespace (its log
    cannot tell: it is the log of every run on this cloud).
    """
    proc = process.run(list(in_namespace(
        'python3', '-c', 'import urllib.request; print(urllib.request.'
        f'urlopen("http://{METADATA_ADDRESS}/openstack/latest/'
        'meta_data.json", timeout=5).read().decode())')), check=False)
    return proc.returncode == 0 and server_id in proc.stdout


def node_services(plugin, directory, server_id):
    """The metadata stand-in and the plugin's node service, in the
    namespace; the node service's socket.
    """
    metadata_files(directory / 'metadata', server_id)
    # Beside the controller's cloud.conf: the node service needs no cloud.
    conf = directory / 'node.conf'
    conf.write_text('[Metadata]\nsearch-order = metadataService\n')
    socket = directory / 'node.sock'
    socket.unlink(missing_ok=True)
    metadata = services.Service(name=METADATA, command=in_namespace(
        'python3', '-u', '-m', 'http.server', '--bind', METADATA_ADDRESS,
        '--directory', directory / 'metadata', '80'))
    node = services.Service(name=NODE, command=in_namespace(
        plugin, '--endpoint', f'unix://{socket}', '--cloud-config', conf,
        '--provide-controller-service=false', '--v', '4'))
    return [metadata, node], socket


def run_sanity(binary, node_socket, controller_socket, directory):
    """csi-sanity's controller specs; the specs of its JSON report."""
    report = directory / 'ginkgo.json'
    skip = '|'.join(SKIPPED)
    proc = process.run(
        [binary, f'--csi.endpoint=unix://{node_socket}',
         f'--csi.controllerendpoint=unix://{controller_socket}',
         '--csi.testvolumesize=1073741824',
         f'--csi.stagingdir={directory / "staging"}',
         f'--csi.mountdir={directory / "mount"}',
         f'--ginkgo.focus={FOCUS}', f'--ginkgo.skip={skip}',
         f'--ginkgo.flake-attempts={ATTEMPTS}',
         f'--ginkgo.json-report={report}', '--ginkgo.no-color',
         f'--ginkgo.timeout={SANITY_SECONDS}s'], check=False)
    check(report.exists(), f'csi-sanity wrote no report (exit '
          f'{proc.returncode}): {proc.stdout.strip()[-500:]}')
    return [spec for suite in json.loads(report.read_text())
            for spec in suite.get('SpecReports') or []
            if spec.get('LeafNodeType') == 'It']


def outcome(spec):
    """A spec's outcome: passed, "passed on attempt <n>", skipped,
    pending, CLEANUP_BUSY (its body passed; its cleanup found a volume
    Cinder was still detaching or deleting), or "failed in <node>:
    <message>".
    """
    state = spec.get('State')
    failure = spec.get('Failure') or {}
    message = failure.get('Message', '')
    if state == 'passed' and spec.get('NumAttempts', 1) > 1:
        return f'passed on attempt {spec["NumAttempts"]}'
    if state in ('passed', 'skipped', 'pending'):
        return state
    # csi-sanity's cleanup lists one error per line; each must be Cinder's
    # answer for a volume it is still detaching or deleting.
    errors = [line for line in message.splitlines() if 'failed:' in line]
    if (failure.get('FailureNodeType') == 'AfterEach' and errors and
            all(any(text in line for text in CINDER_BUSY)
                for line in errors)):
        return CLEANUP_BUSY
    return (f'failed in {failure.get("FailureNodeType", "?")}: '
            f'{message.strip()[:300]}')


def spec_problems(outcomes):
    """What fails the step in csi-sanity's {spec: outcome}."""
    problems = [f'{name}: {result}' for name, result in outcomes.items()
                if result.startswith('failed')]
    if not outcomes.get(REQUIRED, 'absent').startswith(
            ('passed', CLEANUP_BUSY)):
        problems.append(f'{REQUIRED} did not run and pass '
                        f'({outcomes.get(REQUIRED, "absent")})')
    for leaf, why in SKIPPED.items():
        ran = [name for name, result in outcomes.items()
               if name.endswith(leaf) and result != 'skipped']
        problems += [f'{name}: ran, though skipped ({why})' for name in ran]
    return problems


def skip_reasons(outcomes):
    """{spec: why} of the specs of csi-sanity's {spec: outcome} that the
    step skipped (SKIPPED).
    """
    return {name: why for name, result in outcomes.items()
            if result == 'skipped'
            for leaf, why in SKIPPED.items() if name.endswith(leaf)}


def sanity_volumes(cloud):
    return [volume for volume in cloud.member.get(
        'cinder-api', cloud.volume_path(f'/detail?name~={VOLUME_PREFIX}'))[
            'volumes'] if volume['name'].startswith(VOLUME_PREFIX)]


def delete_sanity_volumes(cloud):
    """Detach and delete the volumes csi-sanity left (those Cinder is
    deleting already, waited for); the ids of those that were attached.
    """
    attached = []
    for volume in sanity_volumes(cloud):
        if volume['status'] == 'deleting':
            continue
        for attachment in volume.get('attachments') or []:
            cloud.detach(attachment['server_id'], volume['id'])
            attached.append(volume['id'])
        cloud.wait_volume(volume['id'], ('available',))
        cloud.member.call('DELETE', 'cinder-api', cloud.volume_path(
            f'/{volume["id"]}'), expect=(202, 404))
    rest.wait('the volumes csi-sanity left deleted',
              lambda: not sanity_volumes(cloud),
              cinder_csi_step.SOCKET_SECONDS)
    return attached


def csi_sanity(tracker):
    """The step; its detail. The plugin, its node service and the stand-in
    are stopped, the namespace deleted and csi-sanity's volumes deleted,
    whatever fails.
    """
    cloud = tracker.cloud
    node_id = gophercloud_step.one_server_per_host(tracker)[0]
    plugin, _ = cinder_csi_step.build()
    binary = build()
    # cinder-csi's CreateVolume returns an existing volume of the name
    # asked for: an earlier run's volumes would be csi-sanity's.
    delete_sanity_volumes(cloud)
    directory = layout.directory() / 'csi-sanity'
    directory.mkdir(parents=True, exist_ok=True)
    controller, controller_socket = cinder_csi_step.controller(
        plugin, CONTROLLER, directory)
    namespace('delete')
    namespace('add')
    running = []
    report = tracker.report.csi_sanity = {'node': node_id, 'specs': {}}
    try:
        process.run(list(in_namespace('ip', 'link', 'set', 'lo', 'up')))
        process.run(list(in_namespace('ip', 'address', 'add',
                                      f'{METADATA_ADDRESS}/32', 'dev', 'lo')))
        node, node_socket = node_services(plugin, directory, node_id)
        running = [controller, *node]
        for service in running:
            service.start()
        for service, ready in (
                (controller, controller_socket.exists),
                (node[0], lambda: metadata_served(node_id)),
                (node[1], node_socket.exists)):
            rest.wait(f'{service.name} ready', lambda: ready() or check(
                service.pid(), f'{service.name} exited: ' +
                service.log_tail()), cinder_csi_step.SOCKET_SECONDS)
        with tempfile.TemporaryDirectory() as scratch:
            specs = run_sanity(binary, node_socket, controller_socket,
                               Path(scratch))
        outcomes = {go_tests.spec_name(spec): outcome(spec)
                    for spec in specs}
        report['specs'] = outcomes
        report['skipped_by_the_step'] = skip_reasons(outcomes)
        problems = spec_problems(outcomes)
    finally:
        services.stop_all(running)
        report['log'] = controller.log_tail(40)
        namespace('delete')
        report['left_attached'] = delete_sanity_volumes(cloud)
    check(not problems, '; '.join(problems))
    check(not report['left_attached'], 'csi-sanity left volumes attached: '
          + ', '.join(report['left_attached']))
    counts = {}
    for result in outcomes.values():
        counts[result] = counts.get(result, 0) + 1
    return (f'csi-sanity against cinder-csi, node {node_id}: ' + ', '.join(
        f'{count} {result}' for result, count in sorted(counts.items())) +
        f'; "{REQUIRED}" passed')
