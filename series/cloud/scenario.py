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
from series.cloud.client import check
from series.cloud.client import Cloud
from series.cloud import deploy
from series.cloud import faults
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

# The scenario's own steps: step N is the Nth (`# N` above its function).
STEPS = [
    (f'multi-create of {attach_steps.MULTI_CREATE} servers from one ro '
     'multiattach root volume, on both hosts', attach_steps.multi_create),
    ('a multiattach volume attached rw, ro, ro; every attachment checked',
     attach_steps.attach_modes),
    ("Cinder's readonly flag", attach_steps.readonly_flag),
    ('hard reboot', move_steps.hard_reboot),
    ('live migration to the other host and back',
     move_steps.live_migration),
    ('cold migration: resize to the other host, confirm; resize back, '
     'revert', move_steps.cold_migration),
    ('swap of an ro attachment (a retype Cinder migrates through '
     "Nova's swap volume)", move_steps.swap),
    ('detach and re-attach in the other mode', move_steps.reattach),
    ('shelve-offload, unshelve onto the other host', move_steps.shelve),
    ('evacuate from a failed host', move_steps.evacuate),
    ('refusals leave nothing behind', attach_steps.refusals),
    ("the volumes' RBD images from the host", attach_steps.images),
    ('read-only prefilter: a host without '
     'COMPUTE_VOLUME_READ_ONLY_ATTACH gets no server with an ro volume',
     prefilter_step.read_only_prefilter),
]


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
UPSTREAM_STEPS = [
    ("upstream tempest: the series' tests and the multiattach tests",
     upstream_tempest),
    ('upstream openstacksdk: functional tests of volume attachments',
     functools.partial(upstream_functional, key='openstacksdk',
                       module=sdk_functional)),
    ('upstream python-openstackclient: functional tests of attach modes',
     functools.partial(upstream_functional, key='openstackclient',
                       module=osc_functional)),
]


def run_steps(tracker):
    """STEPS (a failed step 1 leaves the others out), the faults and
    UPSTREAM_STEPS, numbered on from 1; the report.
    """
    tracker.cloud.delete_leftovers()
    for number, (title, function) in enumerate(STEPS, 1):
        passed = steps.run_step(tracker, number, title,
                                functools.partial(function, tracker))
        if not passed and number == 1:
            break
    first_fault = len(STEPS) + 1
    for number, (title, function) in enumerate(faults.FAULTS, first_fault):
        steps.run_step(tracker, number, title,
                       functools.partial(function, tracker))
    for number, (title, function) in enumerate(
            UPSTREAM_STEPS, first_fault + len(faults.FAULTS)):
        steps.run_step(tracker, number, title,
                       functools.partial(function, tracker), reconcile=False)
    return tracker.report


def print_report(report):
    process.say(f'{"step":>4} {"server":8} {"volume":8} {"host":13} '
                f'{"api":3} {"xml":5} {"qemu":5} {"kern":5} {"bypass":7} '
                f'{"rbd":5} guest write')
    for row in report['attachments']:
        process.say(f'{row["step"]!s:>4} {row["server_id"][:8]} '
                    f'{row["volume_id"][:8]} {row["host"]:13} '
                    f'{row["api_mode"] or "-":3} {row["xml_readonly"]!s:5} '
                    f'{row["qemu_ro"]!s:5} {row["guest_kernel_ro"]!s:5} '
                    f'{row["bypass_write"]:7} {row["rbd_changed"]!s:5} '
                    f'{row["guest_write"]}')
    for step in report['steps']:
        process.say(f'step {step["step"]!s:>4} '
                    f'{"passed" if step["passed"] else "FAILED":6} '
                    f'{step["seconds"]:6}s  {step["title"]}')
    tempest = report['tempest']
    if tempest:
        process.say(f'tempest: {tempest["passed"]} passed, '
                    f'{tempest["failed"]} failed, {tempest["skipped"]} '
                    f'skipped in {tempest["seconds"]}s')
        for test in tempest['failures']:
            process.say(f'  FAILED  {test}')
        for test, reason in sorted(tempest['skips'].items()):
            process.say(f'  SKIPPED {test}: {reason}')
    for key in ('openstacksdk', 'openstackclient'):
        functional = report.get(key)
        if functional:
            process.say(f'{key} functional: {functional["passed"]} passed, '
                        f'{functional["failed"]} failed, '
                        f'{functional["skipped"]} skipped in '
                        f'{functional["seconds"]}s')


def run(up=True):
    """`cloud up` if needed (not if `up` is false: a cloud of the series
    known to run, as `cloud upgrade` leaves it), the scenario,
    report.json; the report.
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
    report = run_steps(Tracker(Cloud())).to_json()
    report['seconds'] = round(time.monotonic() - started, 1)
    path = layout.directory() / 'report.json'
    layout.write_json(path, report)
    print_report(report)
    failed = [step for step in report['steps'] if not step['passed']]
    steps.say(f'{len(report["steps"]) - len(failed)} of '
              f'{len(report["steps"])} steps passed in {report["seconds"]}s; '
              f'report in {path.relative_to(config.ROOT)}')
    return report


def main():
    report = run()
    return 1 if any(not step['passed'] for step in report['steps']) else 0
