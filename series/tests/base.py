"""The fixture of the unit tests: a tiny project in a temporary root.

SeriesTestCase builds the root (projects.toml, constraints, the sdist of a
demo project) and patches config.ROOT to it, so every module of the tool
works there; RootTestCase only points config.ROOT at an empty temporary
directory. Run the tests from the repository root:

  python3 -m unittest discover -s series/tests -t .
"""

import contextlib
import hashlib
import http.server
import io
import json
import os
from pathlib import Path
import re
import shutil
import socket
import subprocess
import tarfile
import tempfile
import threading
import unittest
from unittest import mock

from series import checks
from series.cloud import layout
from series import config
from series import queue

# The repository this file is in (not the temporary root of a test).
REPOSITORY = Path(__file__).resolve().parents[2]

AUTHOR = {'GIT_AUTHOR_NAME': 'Jane Dev',
          'GIT_AUTHOR_EMAIL': 'jane@example.com',
          'GIT_COMMITTER_NAME': 'Jane Dev',
          'GIT_COMMITTER_EMAIL': 'jane@example.com',
          'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1'}

CORE = ''.join(f'line {n}\n' for n in range(1, 41))

BACKEND = '''\
import os


def prepare_metadata_for_build_wheel(directory, config_settings=None):
    with open('PKG-INFO') as f:
        metadata = f.read()
    version = metadata.split('Version: ')[-1].strip()
    info = os.path.join(directory, f'demo-{version}.dist-info')
    os.makedirs(info)
    with open(os.path.join(info, 'METADATA'), 'w') as f:
        f.write(metadata)
    return f'demo-{version}.dist-info'
'''

MESSAGE = '''{subject}

Explain why the change is needed, wrapped at seventy-two columns as
Nova asks.

Partially-Implements: blueprint volume-multiattach-enhancements
Signed-off-by: Jane Dev <jane@example.com>
'''


def make_sdist(directory, core=CORE, version='1.0'):
    """Write demo-<version>.tar.gz, a sdist pip can download offline."""
    files = {'PKG-INFO': 'Metadata-Version: 2.1\nName: demo\n'
                         f'Version: {version}\n',
             'pyproject.toml': '[build-system]\nrequires = []\n'
                               'build-backend = "backend"\n'
                               'backend-path = ["."]\n',
             'backend.py': BACKEND,
             'demo/__init__.py': '',
             'demo/core.py': core}
    path = Path(directory) / f'demo-{version}.tar.gz'
    with tarfile.open(path, 'w:gz') as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f'demo-{version}/{name}')
            info.size = len(data)
            info.mtime = 1_600_000_000
            tar.addfile(info, io.BytesIO(data))
    return path


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class SeriesTestCase(unittest.TestCase):

    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix='series-test-'))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.index = self.root / 'index'
        self.index.mkdir()
        sdist = make_sdist(self.index)
        (self.root / 'projects.toml').write_text(
            f'[demo]\nversion = "1.0"\nsha256 = "{sha256(sdist)}"\n'
            'constraints = "constraints/upper-constraints.txt"\n'
            'unit-tests = "demo/tests/unit"\n'
            'functional-tests = "demo/tests/functional"\n')
        (self.root / 'constraints').mkdir()
        (self.root / 'constraints' / 'upper-constraints.txt').write_text(
            'demo===0.9\ndemo-client===2.0\noslo.db===18.1.0\n')
        downloads = self.root / '.work' / 'downloads'
        downloads.mkdir(parents=True)
        shutil.copy(sdist, downloads)
        (self.root / 'patches' / 'demo').mkdir(parents=True)
        patcher = mock.patch.object(config, 'ROOT', self.root)
        patcher.start()
        self.addCleanup(patcher.stop)
        # pip, when a test makes the tool download, sees only self.index.
        env = mock.patch.dict(os.environ, {
            'PIP_NO_INDEX': '1', 'PIP_FIND_LINKS': str(self.index),
            'PIP_CONFIG_FILE': os.devnull})
        env.start()
        self.addCleanup(env.stop)
        self.project = config.get_project('demo')
        self.tree = self.project.tree

    def quiet(self, function, *args, **kwargs):
        with contextlib.redirect_stdout(io.StringIO()):
            return function(*args, **kwargs)

    def git(self, *args):
        return subprocess.run(['git', *args], cwd=self.tree, check=True,
                              text=True, capture_output=True,
                              env=dict(os.environ, **AUTHOR)).stdout

    def edit(self, path, old, new):
        target = self.tree / path
        text = target.read_text()
        self.assertIn(old, text)
        target.write_text(text.replace(old, new, 1))

    def commit(self, subject, message=MESSAGE, *options):
        self.git('add', '-A')
        self.git('commit', '-q', *options, '-m',
                 message.format(subject=subject))

    def make_series(self):
        """Apply the empty series, commit two changes, export them."""
        self.quiet(queue.apply, self.project)
        self.edit('demo/core.py', 'line 10\n', 'line ten\n')
        self.commit('Spell out line ten')
        self.edit('demo/core.py', 'line 30\n', 'line thirty\n')
        (self.tree / 'demo' / 'new.py').write_text('NEW = True\n')
        self.commit('Spell out line thirty and add a module')
        self.quiet(queue.export, self.project)

    def patch_bytes(self):
        return {p.name: p.read_bytes()
                for p in sorted(self.project.patches.iterdir())}

    def problems(self):
        return self.quiet(checks.check, self.project)


class RootTestCase(unittest.TestCase):
    """config.ROOT in a temporary directory."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        patcher = mock.patch.object(config, 'ROOT', self.root)
        patcher.start()
        self.addCleanup(patcher.stop)


def functional_tests_added(patch):
    """The ids of the functional tests that `patch` (a git format-patch
    file of this repository) adds: each added `def test_...` of a
    functional test module, in the class an added line or its hunk's
    header names.
    """
    ids, module, klass = [], None, None
    for line in patch.read_text().splitlines():
        if line.startswith('+++ b/'):
            path = line[len('+++ b/'):]
            module = (path[:-len('.py')].replace('/', '.')
                      if '/tests/functional/' in path else None)
            klass = None
        elif line.startswith('@@') and module:
            header = re.search(r'@@ class (\w+)', line)
            klass = header.group(1) if header else klass
        elif line.startswith('+') and module:
            match = re.match(r'\+(class (\w+)|    def (test_\w+))\(', line)
            if match and match.group(2):
                klass = match.group(2)
            elif match:
                ids.append(f'{module}.{klass}.{match.group(3)}')
    return ids


def assert_selects_functional_tests_added(case, project, tests, count,
                                          not_selected):
    """`tests`, a regular expression, selects every functional test that
    `project`'s patches add (`count` of them) and not `not_selected`.
    """
    patches = sorted((REPOSITORY / 'patches' / project).glob('*.patch'))
    added = [test for patch in patches
             for test in functional_tests_added(patch)]
    case.assertEqual(count, len(added))
    selected = re.compile(tests)
    for test in added:
        case.assertTrue(selected.search(test), test)
    case.assertFalse(selected.search(not_selected))


FAKE_PASSWORD = 'secret'


class FakeServicesHandler(http.server.BaseHTTPRequestHandler):
    """Keystone's token request answered with a token (token-N, N the
    request's number); any other request with what the server's
    `respond(method, path, body)` returns: (status, JSON reply).
    """

    def log_message(self, *args):
        pass

    def answer(self):
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length).decode()
        self.server.seen.append((self.command, self.path, self.headers,
                                 body))
        if self.path == '/v3/auth/tokens':
            status, reply = 201, {'token': {'project': {'id': 'project-id'}}}
            headers = {'X-Subject-Token': f'token-{len(self.server.seen)}'}
        else:
            status, reply = self.server.respond(self.command, self.path,
                                                body)
            headers = {}
        text = json.dumps(reply).encode()
        self.send_response(status)
        for name, value in dict(headers,
                                **{'Content-Length': len(text)}).items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(text)

    do_GET = do_POST = do_PUT = do_DELETE = answer


def fake_services(case, respond):
    """Every service of the cloud's layout answered by one HTTP server on
    this machine (FakeServicesHandler), for the duration of `case` (a
    RootTestCase: the cloud's password is written in its root); the
    list of the requests it got: (method, path, headers, body).
    """
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                             FakeServicesHandler)
    server.seen, server.respond = [], respond
    threading.Thread(target=server.serve_forever, daemon=True).start()
    case.addCleanup(server.server_close)
    case.addCleanup(server.shutdown)
    port = server.server_address[1]
    patcher = mock.patch.object(
        layout, 'PORTS', {service: port for service in layout.PORTS})
    patcher.start()
    case.addCleanup(patcher.stop)
    layout.password_path().parent.mkdir(parents=True, exist_ok=True)
    layout.password_path().write_text(FAKE_PASSWORD + '\n')
    return server.seen


def stestr_run_of(case, run, *args):
    """The keyword arguments `run(*args)` (a cloud step's run of a
    project's tests) hands suites.run_stestr, with the project's tree
    and virtualenv faked; `case` is a RootTestCase.
    """
    shutil.copy(REPOSITORY / 'projects.toml', case.root)
    python = case.root / 'venv' / 'bin' / 'python'
    with mock.patch('series.queue.ensure_tree'), \
            mock.patch('series.virtualenvs.ensure_venv',
                       return_value=python), \
            mock.patch('series.suites.run_stestr') as run_stestr:
        run(*args)
    run_stestr.assert_called_once()
    return run_stestr.call_args.kwargs


def assert_a_repository_of_its_own(case, run, *args):
    """`run(*args)` reads its tests' results from a stestr repository of
    its own in the cloud's directory, and from the ids `stestr list`
    selected: never the last run of the project's tree.
    """
    arguments = stestr_run_of(case, run, *args)
    case.assertTrue(arguments['listed'])
    repository = Path(arguments['repository'])
    case.assertTrue(repository.is_relative_to(layout.directory()),
                    repository)
    case.assertEqual('stestr', repository.name)
