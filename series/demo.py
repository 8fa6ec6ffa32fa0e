"""The main job: the demo scenario, run by hand (`tools/series demo`) or
end to end in CI with its API probed from outside.
"""

import json
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from series import config
from series import process
from series import queue
from series import suites
from series import virtualenvs


def demo_dir():
    """Where the scenario writes its transcript, log and endpoint."""
    return config.ROOT / '.work' / 'demo'


# Nova's native threading mode, the default Nova is moving to; in eventlet
# mode the scenario runs the same, with deprecation notices.
SCENARIO_ENV = {'OS_NOVA_DISABLE_EVENTLET_PATCHING': 'true'}


# A volume no Cinder holds: the API must answer 404, as with real Cinder.
UNKNOWN_VOLUME = '7a0d1c52-1f4b-4c1e-9d55-000000000404'

# How long the scenario has to stop once told, before it is killed.
STOP_SECONDS = 30


def scenario_command(project, keep_running=False, port=0, pid_to_signal=0):
    """The command that runs the demo scenario with the project's venv."""
    python = virtualenvs.ensure_venv(project)
    command = [python, config.ROOT / 'demo' / 'multiattach_scenario.py',
               '--transcript', demo_dir() / 'transcript.md']
    if keep_running:
        command.append('--keep-running')
    if port:
        command += ['--port', str(port)]
    if pid_to_signal:
        command += ['--pid-to-signal', str(pid_to_signal)]
    return [str(part) for part in command]


def run_scenario(command, cwd, env, stop_seconds=STOP_SECONDS, stdout=None):
    """Run the scenario; SIGINT or SIGTERM to this process stops it.

    The signal is passed on to the scenario, which stops its deployment;
    one that has not stopped `stop_seconds` later is killed. Returns its
    exit code, and removes endpoint.json and clouds.yaml, whose tokens are
    dead by then.
    """
    scenario = subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout)
    told = []

    def pass_on(signum, frame):
        told.append(time.monotonic())
        if scenario.poll() is None:
            scenario.send_signal(signum)

    previous = {signum: signal.signal(signum, pass_on)
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                return scenario.wait(timeout=1)
            except subprocess.TimeoutExpired:
                if told and time.monotonic() - told[0] > stop_seconds:
                    process.say(f'demo: the scenario did not stop within '
                                f'{stop_seconds}s of the signal: killed')
                    scenario.kill()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for written in ('endpoint.json', 'clouds.yaml'):
            (demo_dir() / written).unlink(missing_ok=True)


def demo(args):
    """The main job: the series applied, installed and shown working."""
    started = time.monotonic()
    if args.project != 'nova':
        raise config.SeriesError('the demo shows the Nova series (with Cinder '
                                 'answered as its companion series does)')
    project = config.get_project('nova')
    if args.work_in_progress:
        queue.require_tree(project)
        process.say(f'demo: [1/3] {project.name} {project.version} with the '
                    f'work tree as it is ({project.tree})')
    else:
        process.say(f'demo: [1/3] {project.name} {project.version} with the '
                    'series applied')
        queue.apply(project, force=args.force, alternative=(
            '\nor run the demo on the work tree as it is: tools/series '
            'demo --work-in-progress'))
    process.say('demo: [2/3] the virtualenv (pinned by upper-constraints)')
    command = scenario_command(project, args.keep_running, args.port,
                               pid_to_signal=os.getpid())
    process.say(f'demo: [3/3] the scenario: starting Nova\'s services in one '
                f'process (Ctrl-C or kill -INT {os.getpid()} stops it)')
    returncode = run_scenario(
        command, project.tree,
        {**os.environ, **project.test_env, **SCENARIO_ENV})
    process.say(f'demo: {"finished" if returncode == 0 else "FAILED"} in '
                f'{(time.monotonic() - started) / 60:.1f} min')
    return returncode


def scenario_counts(output):
    """(steps as stated, steps not) from the scenario's last line."""
    match = re.search(r'^(\d+) steps as stated, (\d+) not', output, re.M)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def probe_api(info):
    """Reach the scenario's API from another process, as curl would.

    Returns (what, ok, observed) for each request.
    """
    def request(path, token=None, method='GET', body=None, root=False):
        base_url = info['endpoint']
        url = (base_url.removesuffix('/v2.1') if root else base_url) + path
        headers = {'OpenStack-API-Version':
                   f'compute {info["microversion"]}',
                   'Content-Type': 'application/json'}
        if token:
            headers['X-Auth-Token'] = token
        data = json.dumps(body).encode() if body is not None else None
        try:
            with urllib.request.urlopen(urllib.request.Request(
                    url, data=data, headers=headers, method=method),
                    timeout=30) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            try:
                return error.code, json.load(error)
            except ValueError:
                return error.code, None

    def fault(body, name, code):
        """Nova's error shape: {"itemNotFound": {"code": 404, ...}}."""
        inner = (body or {}).get(name)
        return isinstance(inner, dict) and inner.get('code') == code and \
            bool(inner.get('message'))

    probes = []
    code, body = request('/servers', info['TOKEN'])
    servers = body['servers'] if code == 200 else []
    probes.append(('GET /servers with the printed token', bool(servers),
                   f'{code}, {len(servers)} servers'))
    for server in servers[:1]:
        code, body = request(
            f'/servers/{server["id"]}/os-volume_attachments', info['TOKEN'])
        modes = [a.get('attach_mode') for a in
                 (body or {}).get('volumeAttachments', [])]
        probes.append(('GET os-volume_attachments shows attach_mode',
                       code == 200 and bool(modes) and None not in modes,
                       f'{code}, modes {modes}'))
        code, body = request(
            f'/servers/{server["id"]}/os-volume_attachments', info['TOKEN'],
            'POST', {'volumeAttachment': {'volumeId': UNKNOWN_VOLUME,
                                          'attach_mode': 'ro'}})
        probes.append(('an unknown volume gets 404 (itemNotFound)',
                       code == 404 and fault(body, 'itemNotFound', 404),
                       f'{code} {body}'))
    code, body = request('/servers', 'not-a-token')
    probes.append(('an unknown token gets 401 (unauthorized)',
                   code == 401 and fault(body, 'unauthorized', 401),
                   f'{code} {body}'))
    code, body = request('/', root=True)
    probes.append(('GET / without a token lists the versions',
                   code == 200 and 'versions' in (body or {}), f'{code}'))
    code, body = request('')
    probes.append(('GET /v2.1 without a token',
                   code == 200 and 'version' in (body or {}), f'{code}'))
    guests = Path(info.get('guest_disks', '/nonexistent'))
    written = [s for s in info.get('servers', [])
               if (guests / f'{s}.xml').exists()]
    probes.append(('guest disk XML written for every server',
                   bool(written) and written == info['servers'],
                   f'{len(written)} of {len(info.get("servers", []))}'))
    return probes


CLIENT_CHECK = re.compile(r'^(ok|FAILED): (.*?) => (.*)$', re.M)


def clients_python():
    """The python-openstackclient virtualenv (with the SDK's series), or
    None when the clients have no series.
    """
    projects = config.load_projects()
    clients = projects.get('python-openstackclient')
    if not clients or not queue.read_series(clients):
        return None
    queue.ensure_tree(clients)
    return virtualenvs.ensure_venv(clients)


def probe_clients(python, endpoint_file):
    """demo/clients_end_to_end.py: openstacksdk and the openstack CLI with
    their series against the running demo. Returns (what, ok, observed).
    """
    proc = subprocess.run(
        [python, config.ROOT / 'demo' / 'clients_end_to_end.py',
         endpoint_file], cwd=config.ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    probes = [(what, status == 'ok', observed) for status, what, observed
              in CLIENT_CHECK.findall(proc.stdout)]
    if proc.returncode != 0 and all(ok for _, ok, _ in probes):
        probes.append(('demo/clients_end_to_end.py ran to its end', False,
                       f'exit {proc.returncode}: ' +
                       ' | '.join(proc.stdout.strip().splitlines()[-3:])))
    return probes


def demo_command():
    """The README's main command, kept running: what CI runs and stops."""
    return [sys.executable, str(config.ROOT / 'tools' / 'series'), 'demo',
            '--keep-running']


def end_to_end(timeout=600):
    """CI: the main command, its API probed from outside, then stopped.

    It runs `tools/series demo --keep-running` and stops it with SIGINT,
    as a user would.
    """
    result = suites.SuiteResult(name='demo scenario (end to end)')
    log_path = config.ROOT / '.work' / 'logs' / 'demo.log'
    log_path.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'the demo, end to end: {" ".join(demo_command()[1:])} '
                f'(log: {log_path.relative_to(config.ROOT)}, transcript: '
                f'{(demo_dir() / "transcript.md").relative_to(config.ROOT)})')
    endpoint_file = demo_dir() / 'endpoint.json'
    endpoint_file.unlink(missing_ok=True)
    # Built before the demo starts: the clients run while it is up.
    python = clients_python()
    with open(log_path, 'w') as log:
        running = subprocess.Popen(demo_command(), cwd=config.ROOT,
                                   stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while (running.poll() is None and not endpoint_file.exists() and
               time.monotonic() < deadline):
            time.sleep(1)
        probes = []
        reached = endpoint_file.exists()
        if reached:
            probes = probe_api(json.loads(endpoint_file.read_text()))
            if python:
                probes += probe_clients(python, endpoint_file)
        told = time.monotonic()
        signalled = running.poll() is None
        if signalled:
            running.send_signal(signal.SIGINT)
        try:
            returncode = running.wait(timeout=120)
            if signalled:
                probes.append(('SIGINT stops it', returncode == 0,
                               f'exit {returncode} '
                               f'{time.monotonic() - told:.1f}s after '
                               'SIGINT'))
        except subprocess.TimeoutExpired:
            running.kill()
            running.wait()
            returncode = 'killed: did not stop on SIGINT'
            probes.append(('SIGINT stops it', False,
                           'still running 120s after SIGINT: killed'))
        if reached:
            left = [path.name for path in (
                endpoint_file, endpoint_file.with_name('clouds.yaml'))
                if path.exists()]
            probes.append(('endpoint.json and clouds.yaml removed on exit',
                           not left, f'still there: {left}' if left
                           else 'removed'))
    output = log_path.read_text()
    table = output[output.rfind('\nstep '):] if '\nstep ' in output \
        else output[-3000:]
    process.say(table.rstrip())
    result.passed, result.failed = scenario_counts(output)
    for what, ok, observed in probes:
        process.say(f'  from outside: {what}: {observed} '
                    f'{"ok" if ok else "FAILED"}')
        result.passed += ok
        result.failed += not ok
    if not reached or returncode != 0 or not result.passed:
        result.failed += 1
        process.say(f'  the demo exited {returncode}; its API was '
                    f'{"" if reached else "never "}reached from outside')
    return result
