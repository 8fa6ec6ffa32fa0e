"""The volume-multiattach-enhancements feature, end to end.

Builds a Nova deployment inside this process from Nova's own functional
test stack: the compute API WSGI application served over HTTP on
127.0.0.1 (a real port), nova-conductor, nova-scheduler with real
placement, three nova-compute services running the libvirt driver over
fakelibvirt, SQLite databases, and block storage answered by Nova's
CinderFixture (switched to answer as Cinder with the companion series, as the
contract suite in contract/cinder/ verified on real Cinder code).

Then it drives the feature over HTTP at microversion 2.105, printing each
request and response, checks every outcome and ends with a summary table.
It exits 1 if any step did not behave as stated.

Run with: tools/series demo [--keep-running]
"""

# First: in eventlet mode this import applies the monkey patching, which
# must come before anything else is imported. tools/series runs the
# scenario in Nova's native threading mode
# (OS_NOVA_DISABLE_EVENTLET_PATCHING=true), where it patches nothing.
import nova.tests.functional  # noqa: F401 isort:skip

import argparse
from pathlib import Path
import sys
import unittest

from demo_deployment import Deployment
from demo_report import Outcome
from demo_report import Report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--keep-running', action='store_true',
                        help='leave the API listening until interrupted')
    parser.add_argument('--port', type=int, default=0,
                        help='port on 127.0.0.1 (default: any free port)')
    parser.add_argument('--transcript', type=Path,
                        default=Path('demo-transcript.md'))
    parser.add_argument('--pid-to-signal', type=int, default=0,
                        help='the PID to name in the keep-running message '
                        '(that of tools/series, which passes signals on; '
                        'default: this process)')
    args = parser.parse_args()
    args.endpoint_file = args.transcript.with_name('endpoint.json')
    args.endpoint_file.unlink(missing_ok=True)
    args.endpoint_file.with_name('clouds.yaml').unlink(missing_ok=True)
    report = Report(args.transcript)
    result = unittest.TestResult()
    Deployment(args, report).run(result)
    for _, trace in result.errors + result.failures:
        # The deployment did not start or the scenario could not run.
        print(trace, file=sys.stderr)
        report.outcomes.append(Outcome(
            'the deployment', 'to run', trace.strip().splitlines()[-1],
            False))
        report.printed = False
    if not report.printed:
        report.print_summary()
    return 0 if report.ok else 1


if __name__ == '__main__':
    sys.exit(main())
