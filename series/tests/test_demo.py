"""Tests of series.demo: the demo verb and the end-to-end CI step."""

import argparse
import contextlib
import functools
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from unittest import mock

from series import cli
from series import config
from series import demo
from series import queue
from series.tests import base


FAKE_SCENARIO = """
import http.server, json, os, signal, sys, threading
from pathlib import Path

# Run in Nova's native threading mode, whatever the tests' own setting.
assert os.environ['OS_NOVA_DISABLE_EVENTLET_PATCHING'] == 'true'
mode = sys.argv[1]
transcript = Path(sys.argv[sys.argv.index('--transcript') + 1])
print('step   expected   observed')
if mode == 'failing':
    print('1 steps as stated, 1 not')
    sys.exit(1)
print('3 steps as stated, 0 not: the feature works end to end', flush=True)
if '--keep-running' not in sys.argv:
    sys.exit(0)


def fault(name, code):
    if mode == 'plain-errors':
        return {'error': 'no'}
    return {name: {'code': code, 'message': 'as Nova says'}}


class API(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body):
        self.send_response(code)
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def do_GET(self):
        if self.path == '/':
            return self.answer(200, {'versions': []})
        if self.path == '/v2.1':
            return self.answer(200, {'version': {}})
        if self.headers['X-Auth-Token'] != 'good' and mode != 'no-auth':
            return self.answer(401, fault('unauthorized', 401))
        if self.path.endswith('/servers'):
            return self.answer(200, {'servers': [{'id': 'abc'}]})
        attachment = {'volumeId': 'v'}
        if mode != 'no-mode':
            attachment['attach_mode'] = 'ro'
        self.answer(200, {'volumeAttachments': [attachment]})

    def do_POST(self):
        length = int(self.headers['Content-Length'])
        volume = json.loads(self.rfile.read(length))['volumeAttachment']
        if mode == 'any-volume':
            return self.answer(202, {})
        self.answer(404, fault('itemNotFound', 404))

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(('127.0.0.1', 0), API)
threading.Thread(target=server.serve_forever, daemon=True).start()
stop = threading.Event()
for signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(signum, lambda *_: stop.set())
guests = transcript.with_name('guests')
guests.mkdir(parents=True, exist_ok=True)
(guests / 'abc.xml').write_text('<disks/>')
endpoint = transcript.with_name('endpoint.json')
endpoint.write_text(json.dumps({
    'endpoint': 'http://127.0.0.1:%d/v2.1' % server.server_address[1],
    'microversion': '2.105', 'TOKEN': 'good', 'ADMIN_TOKEN': 'admin',
    'servers': ['abc'], 'guest_disks': str(guests),
    'pid': int(sys.argv[sys.argv.index('--pid-to-signal') + 1])
    if '--pid-to-signal' in sys.argv else os.getpid()}))
stop.wait()
if mode == 'hangs':
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Event().wait()
endpoint.unlink()
"""


class EndToEndTest(base.SeriesTestCase):
    """The demo verb, and the CI step that runs it and probes its API."""

    def setUp(self):
        super().setUp()
        self.script = self.root / 'fake_scenario.py'
        self.script.write_text(FAKE_SCENARIO)
        self.tree.mkdir(parents=True, exist_ok=True)
        self.project.test_env['OS_NOVA_DISABLE_EVENTLET_PATCHING'] = 'False'

    def fake_command(self, mode, keep_running=False, pid_to_signal=0):
        return [sys.executable, str(self.script), mode, '--transcript',
                str(demo.demo_dir() / 'transcript.md')] + (
                    ['--keep-running'] if keep_running else []) + (
                    ['--pid-to-signal', str(pid_to_signal)]
                    if pid_to_signal else [])

    def run_demo(self, mode, keep_running=False, work_in_progress=False):
        def command(project, keep_running=False, port=0, pid_to_signal=0):
            return self.fake_command(mode, keep_running, pid_to_signal)
        # The scenario's own output would break unittest's -v lines.
        quiet_scenario = functools.partial(demo.run_scenario,
                                           stdout=subprocess.DEVNULL)
        with mock.patch.object(queue, 'apply') as apply, \
                mock.patch.object(demo, 'run_scenario', quiet_scenario), \
                mock.patch.object(demo, 'scenario_command', command), \
                mock.patch.object(config, 'get_project',
                                  return_value=self.project):
            returncode = demo.demo(argparse.Namespace(
                project='nova', force=False, keep_running=keep_running,
                port=0, work_in_progress=work_in_progress))
        return returncode, apply

    def end_to_end(self, mode):
        # CI runs `tools/series demo --keep-running`; here the stand-in
        # scenario takes its place, with the environment the demo gives.
        with mock.patch.object(demo, 'demo_command',
                               lambda: self.fake_command(mode, True)), \
                mock.patch.dict(os.environ, demo.SCENARIO_ENV):
            return self.quiet(demo.end_to_end, timeout=60)

    def test_demo_is_of_nova(self):
        error = io.StringIO()
        with contextlib.redirect_stderr(error):
            self.assertEqual(2, self.quiet(cli.main, ['demo', 'cinder']))
        self.assertIn('the demo shows the Nova series', error.getvalue())

    def test_demo_returns_the_scenario_exit_code(self):
        signals = (signal.SIGINT, signal.SIGTERM)
        handlers = [signal.getsignal(s) for s in signals]
        for mode, expected in (('green', 0), ('failing', 1)):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(expected, self.run_demo(mode)[0])
            self.assertIn('demo: [3/3]', out.getvalue())
            self.assertIn(f'kill -INT {os.getpid()} stops it',
                          out.getvalue())
        # Ctrl-C works again in the caller once the scenario has ended.
        self.assertEqual(handlers, [signal.getsignal(s) for s in signals])

    def test_demo_on_the_work_tree_as_it_is(self):
        self.quiet(queue.apply, self.project)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            returncode, apply = self.run_demo('green', work_in_progress=True)
        self.assertEqual(0, returncode)
        apply.assert_not_called()
        self.assertIn('with the work tree as it is', out.getvalue())

    def test_signal_to_the_demo_stops_the_kept_running_scenario(self):
        # As `kill -INT <pid>` or `kill -TERM <pid>` from another shell:
        # the signal reaches this process, which passes it on.
        endpoint = demo.demo_dir() / 'endpoint.json'
        for signum in (signal.SIGINT, signal.SIGTERM):
            def signal_once_running():
                while not endpoint.exists():
                    time.sleep(0.1)
                info = json.loads(endpoint.read_text())
                self.assertEqual(os.getpid(), info['pid'])
                os.kill(info['pid'], signum)
            sender = threading.Thread(target=signal_once_running)
            sender.start()
            with contextlib.redirect_stdout(io.StringIO()):
                returncode, _ = self.run_demo('green', keep_running=True)
            sender.join()
            self.assertEqual(0, returncode)
            self.assertFalse(endpoint.exists())

    def test_scenario_that_ignores_the_signal_is_killed(self):
        endpoint = demo.demo_dir() / 'endpoint.json'

        def signal_once_running():
            while not endpoint.exists():
                time.sleep(0.1)
            os.kill(os.getpid(), signal.SIGINT)
        sender = threading.Thread(target=signal_once_running)
        sender.start()
        with contextlib.redirect_stdout(io.StringIO()) as out:
            returncode = demo.run_scenario(
                self.fake_command('hangs', keep_running=True), self.root,
                dict(os.environ, **demo.SCENARIO_ENV), stop_seconds=1,
                stdout=subprocess.DEVNULL)
        sender.join()
        self.assertEqual(-signal.SIGKILL, returncode)
        self.assertIn('did not stop within 1s', out.getvalue())
        # Its tokens died with it.
        self.assertFalse(endpoint.exists())

    def test_green_scenario_reached_from_outside_and_stopped(self):
        result = self.end_to_end('green')
        # 3 steps, 8 requests and checks from outside, SIGINT, cleanup.
        self.assertEqual((3 + 9, 0), (result.passed, result.failed))

    def test_failing_scenario(self):
        result = self.end_to_end('failing')
        self.assertEqual((1, 2), (result.passed, result.failed))

    def test_attach_mode_missing_from_the_api(self):
        result = self.end_to_end('no-mode')
        self.assertEqual((11, 1), (result.passed, result.failed))

    def test_any_token_accepted(self):
        result = self.end_to_end('no-auth')
        self.assertEqual((11, 1), (result.passed, result.failed))

    def test_unknown_volume_attached(self):
        result = self.end_to_end('any-volume')
        self.assertEqual((11, 1), (result.passed, result.failed))

    def test_errors_not_in_nova_shape(self):
        result = self.end_to_end('plain-errors')
        self.assertEqual((10, 2), (result.passed, result.failed))

    def test_scenario_that_does_not_stop_is_killed(self):
        real_wait = subprocess.Popen.wait

        def time_out_then_reap(scenario, timeout=None):
            if timeout:
                raise subprocess.TimeoutExpired('scenario', timeout)
            # Reap the killed scenario, so no child outlives the test.
            return real_wait(scenario, timeout=30)
        with mock.patch.object(demo.subprocess.Popen, 'wait', autospec=True,
                               side_effect=time_out_then_reap) as wait:
            result = self.end_to_end('hangs')
        self.assertEqual(2, wait.call_count)
        # Not stopped, endpoint.json left behind, and the exit code.
        self.assertEqual((3 + 7, 2 + 1), (result.passed, result.failed))
