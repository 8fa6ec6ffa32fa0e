"""Running one step of a run on the real cloud: its time, its detail or
its failure, each server's host before and after it, and the ledger
compared with what the cloud holds; its entry in the report.
"""

import subprocess
import time

from series.cloud.client import check
from series.cloud.client import Failed
from series.cloud import ledger
from series import config
from series import process


def say(message):
    process.say(f'scenario: {message}')


def run_step(tracker, number, title, function, reconcile=True):
    """Run `function` (no argument; it returns the step's detail) as step
    `number`; unless `reconcile` is false (a step whose servers are not
    the tracker's), it passes only if the ledger then agrees with what
    the cloud holds. Whether it passed.
    """
    say(f'step {number}: {title}')
    tracker.current_step = number
    before = tracker.placements()
    started = time.monotonic()
    entry = {'step': number, 'title': title}
    try:
        detail = function() or ''
        if reconcile:
            compare_ledger(tracker, entry)
        passed = True
    except (Failed, config.SeriesError, subprocess.CalledProcessError,
            StopIteration) as error:
        detail = f'{type(error).__name__}: {error}'
        passed = False
    seconds = round(time.monotonic() - started, 1)
    after = tracker.placements()
    entry.update({
        'passed': passed, 'detail': detail, 'seconds': seconds,
        'hosts': {server: [before.get(server), after.get(server)]
                  for server in sorted(set(before) | set(after))}})
    tracker.report.steps.append(entry)
    say(f'step {number}: {"passed" if passed else "FAILED"} '
        f'({seconds}s) {detail}')
    return passed


def compare_ledger(tracker, entry):
    """Compare the ledger with what Nova, Cinder and libvirt hold;
    both go into the step's `entry`; fail on any difference.
    """
    problems = ledger_problems(tracker, entry)
    check(not problems, 'the ledger: ' + '; '.join(problems))


def ledger_problems(tracker, entry):
    """What in the cloud disagrees with the ledger; the ledger and what
    was seen go into `entry` (a step's, or a fault's before it deletes
    its servers).
    """
    entry['expected'] = tracker.ledger.expected()
    entry['seen'] = ledger.observe(tracker.cloud,
                                   list(tracker.ledger.hosts),
                                   list(tracker.volumes.values()))
    return ledger.compare(entry['expected'], entry['seen'])
