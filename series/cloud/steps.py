"""Running the steps of a run on the real cloud, each known by its name:
its time, its detail or its failure, each server's host before and after
it, and the ledger compared with what the cloud holds; its entry in the
report.
"""

import dataclasses
import subprocess
import time
import typing

from series.cloud.client import check
from series.cloud.client import Failed
from series.cloud import ledger
from series import config
from series import process


def say(message):
    process.say(f'scenario: {message}')


@dataclasses.dataclass(frozen=True)
class Step:
    """A step of a run. Its `name` is what the report, the tests, the
    messages and the manual call it; its number is only its place in its
    table. `reconcile` is false for a step whose servers are not the
    tracker's; a step that `needs` another runs only if that one passed.
    """

    name: str
    title: str
    function: typing.Callable
    reconcile: bool = True
    needs: str = None


def run_table(tracker, table, callable_of):
    """Each step of `table` in order, numbered from 1, as run_step() runs
    it (`callable_of(step)` gives what to call); a step whose `needs` did
    not pass is entered as failed, not run.
    """
    passed = set()
    for number, step in enumerate(table, 1):
        if step.needs and step.needs not in passed:
            not_run(tracker, step, number)
        elif run_step(tracker, step, number, callable_of(step)):
            passed.add(step.name)


def not_run(tracker, step, number):
    detail = f'not run: it needs {step.needs}, which did not pass'
    tracker.report.steps.append({
        'step': step.name, 'number': number, 'title': step.title,
        'passed': False, 'detail': detail, 'seconds': 0.0, 'hosts': {}})
    say(f'{step.name} ({number}): {detail}')


def run_step(tracker, step, number, function):
    """Run `function` (no argument; it returns the step's detail) as
    `step`, the `number`th of its run; unless the step is not reconciled,
    it passes only if the ledger then agrees with what the cloud holds.
    Whether it passed.
    """
    say(f'{step.name} ({number}): {step.title}')
    tracker.current_step = step.name
    before = tracker.placements()
    started = time.monotonic()
    entry = {'step': step.name, 'number': number, 'title': step.title}
    try:
        detail = function() or ''
        if step.reconcile:
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
    say(f'{step.name} ({number}): {"passed" if passed else "FAILED"} '
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
