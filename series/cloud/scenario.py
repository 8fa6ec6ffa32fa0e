"""`cloud scenario`: the feature on the real two-host cloud. Every
attachment is checked after each step, on the host that runs the server,
from five places (the API, the libvirt XML, QEMU, the guest, the volume's
RBD image), through live and cold migration, evacuation, shelve and
unshelve, swap, detach and re-attach; then the refusals, the faults
(series.cloud.faults), tempest and the clients' functional tests.
Writes .work/cloud/report.json.
"""

import functools
import time

from series.cloud import attach_steps
from series.cloud import cinder_csi_step
from series.cloud.client import check
from series.cloud.client import Cloud
from series.cloud import csi_sanity_step
from series.cloud import deploy
from series.cloud import faults
from series.cloud import gophercloud_acceptance
from series.cloud import gophercloud_step
from series.cloud import layout
from series.cloud import move_steps
from series.cloud import osc_functional
from series.cloud import prefilter_step
from series.cloud import releases
from series.cloud import sdk_functional
from series.cloud import steps
from series.cloud import tempest
from series.cloud.tracker import Tracker
from series import config
from series import process

MULTI_CREATE = 'multi-create'


def after_multi_create(name, title, function):
    """A step on the servers the multi-create step makes."""
    return steps.Step(name, title, function, needs=MULTI_CREATE)


STEPS = (
    steps.Step(MULTI_CREATE, f'multi-create of {attach_steps.MULTI_CREATE} '
               'servers from one ro multiattach root volume, on both hosts',
               attach_steps.multi_create),
    after_multi_create(
        'attach-modes', 'a multiattach volume attached rw, ro, ro; every '
        'attachment checked', attach_steps.attach_modes),
    after_multi_create('gophercloud-attach', 'gophercloud attaches a '
                       'multiattach volume ro on both hosts and a control '
                       'without a mode; every attachment checked',
                       gophercloud_step.gophercloud_attach),
    after_multi_create('cinder-csi', "Kubernetes' cinder-csi plugin "
                       'publishes a multiattach volume MULTI_NODE_READER_ONLY '
                       'on both hosts and a control SINGLE_NODE_WRITER; '
                       'every attachment checked', cinder_csi_step.cinder_csi),
    after_multi_create('csi-sanity', "csi-sanity's controller specs against "
                       'cinder-csi, publishing to a server of the run',
                       csi_sanity_step.csi_sanity),
    after_multi_create('readonly-flag', "Cinder's readonly flag",
                       attach_steps.readonly_flag),
    after_multi_create('hard-reboot', 'hard reboot', move_steps.hard_reboot),
    after_multi_create('live-migration', 'live migration to the other host '
                       'and back', move_steps.live_migration),
    after_multi_create('cold-migration', 'cold migration: resize to the '
                       'other host, confirm; resize back, revert',
                       move_steps.cold_migration),
    after_multi_create('swap', 'swap of an ro attachment (a retype Cinder '
                       "migrates through Nova's swap volume)",
                       move_steps.swap),
    after_multi_create('reattach', 'detach and re-attach in the other mode',
                       move_steps.reattach),
    after_multi_create('shelve', 'shelve-offload, unshelve onto the other '
                       'host', move_steps.shelve),
    after_multi_create('evacuate', 'evacuate from a failed host',
                       move_steps.evacuate),
    after_multi_create('refusals', 'refusals leave nothing behind',
                       attach_steps.refusals),
    after_multi_create('rbd-images', "the volumes' RBD images from the host",
                       attach_steps.images),
    after_multi_create('read-only-prefilter', 'read-only prefilter: a host '
                       'without COMPUTE_VOLUME_READ_ONLY_ATTACH gets no '
                       'server with an ro volume',
                       prefilter_step.read_only_prefilter),
)


def upstream_tempest(tracker):
    result = tempest.run(tracker.cloud.admin)
    tracker.report.tempest = result.report()
    check(result.passed and not result.failed,
          f'tempest: {result.failed} failed: '
          f'{", ".join(result.failures())}')
    return (f'tempest: {result.passed} passed, {result.failed} '
            f'failed, {result.skipped} skipped')


def upstream_functional(tracker, key, module):
    """A client's functional tests (`module`.run()), in the report's
    section `key`: the step fails on a test failed or skipped.
    """
    result = module.run()
    setattr(tracker.report, key, result.report())
    check(result.passed and not result.failed and not result.skipped,
          f'{result.name}: {result.failed} failed, {result.skipped} '
          f'skipped: {", ".join(result.failures() + list(result.skips))}')
    return (f'{result.name}: {result.passed} passed, {result.failed} '
            f'failed, {result.skipped} skipped')


# Last, and not reconciled: their servers are theirs, deleted by their
# own clean-ups.
UPSTREAM_STEPS = (
    steps.Step('tempest', "upstream tempest: the series' tests and the "
               'multiattach tests', upstream_tempest, reconcile=False),
    steps.Step('openstacksdk-functional', 'upstream openstacksdk: '
               'functional tests of volume attachments',
               functools.partial(upstream_functional, key='openstacksdk',
                                 module=sdk_functional), reconcile=False),
    steps.Step('openstackclient-functional', 'upstream '
               'python-openstackclient: functional tests of attach modes',
               functools.partial(upstream_functional, key='openstackclient',
                                 module=osc_functional), reconcile=False),
    steps.Step('gophercloud-acceptance', 'upstream gophercloud: acceptance '
               'tests of volume attachments and attach modes',
               functools.partial(upstream_functional, key='gophercloud',
                                 module=gophercloud_acceptance),
               reconcile=False),
)
# The run, in order: one table.
SCENARIO = (*STEPS, *faults.FAULTS, *UPSTREAM_STEPS)


def run_steps(tracker):
    """SCENARIO's steps, each given the tracker; the report."""
    tracker.cloud.delete_leftovers()
    steps.run_table(tracker, SCENARIO,
                    lambda step: functools.partial(step.function, tracker))
    return tracker.report


def print_report(report):
    process.say(f'{"step":20} {"server":8} {"volume":8} {"host":13} '
                f'{"api":3} {"xml":5} {"qemu":5} {"kern":5} {"bypass":7} '
                f'{"rbd":5} guest write')
    for row in report.attachments:
        process.say(f'{row["step"]:20} {row["server_id"][:8]} '
                    f'{row["volume_id"][:8]} {row["host"]:13} '
                    f'{row["api_mode"] or "-":3} {row["xml_readonly"]!s:5} '
                    f'{row["qemu_ro"]!s:5} {row["guest_kernel_ro"]!s:5} '
                    f'{row["bypass_write"]:7} {row["rbd_changed"]!s:5} '
                    f'{row["guest_write"]}')
    for step in report.steps:
        process.say(f'{step["number"]:>2} {step["step"]:26} '
                    f'{"passed" if step["passed"] else "FAILED":6} '
                    f'{step["seconds"]:6}s  {step["title"]}')
    tempest = report.tempest
    if tempest:
        process.say(f'tempest: {tempest["passed"]} passed, '
                    f'{tempest["failed"]} failed, {tempest["skipped"]} '
                    f'skipped in {tempest["seconds"]}s')
        for test in tempest['failures']:
            process.say(f'  FAILED  {test}')
        for test, reason in sorted(tempest['skips'].items()):
            process.say(f'  SKIPPED {test}: {reason}')
    for key in ('openstacksdk', 'openstackclient'):
        functional = getattr(report, key)
        if functional:
            process.say(f'{key} functional: {functional["passed"]} passed, '
                        f'{functional["failed"]} failed, '
                        f'{functional["skipped"]} skipped in '
                        f'{functional["seconds"]}s')


def run(up=True):
    """`cloud up` if needed (not if `up` is false: a cloud of the series
    known to run, as `cloud upgrade` leaves it), the scenario,
    report.json; the report (a tracker.Report).
    """
    pristine = sorted(part for part, release in releases.current().items()
                      if release == releases.PRISTINE)
    if pristine:
        raise config.SeriesError(
            f'the cloud runs the pristine releases on {", ".join(pristine)} '
            '(left by a `cloud upgrade` that did not finish): '
            '`tools/series cloud down` first')
    if up:
        deploy.up()
    started = time.monotonic()
    report = run_steps(Tracker(Cloud()))
    report.seconds = round(time.monotonic() - started, 1)
    path = layout.directory() / 'report.json'
    layout.write_json(path, report.to_json())
    print_report(report)
    steps.say(f'{len(report.steps) - len(report.failures())} of '
              f'{len(report.steps)} steps passed in {report.seconds}s; '
              f'report in {path.relative_to(config.ROOT)}')
    return report


def main():
    return 0 if run().passed() else 1
