"""A project's test virtualenv, pinned by the shared upper-constraints."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib

from series import config
from series import process
from series import queue
from series import sdist


def constraints_for(project):
    """upper-constraints without the project under test, as OpenStack CI,
    nor the projects whose patched trees its virtualenv takes instead.
    """
    sdist.check_constraints(project)
    lines = project.constraints_file.read_text().splitlines()
    unpinned = {project.name, *project.series_requirements}
    keep = [line for line in lines
            if re.split(r'[=<>!~;\s\[]', line, maxsplit=1)[0].lower()
            not in unpinned]
    return '\n'.join(keep) + '\n'


# uv installs a virtualenv's packages in seconds where pip takes minutes
# (it resolves and downloads in parallel and compiles no bytecode). The
# virtualenvs are made by `python -m venv` all the same, with pip in them.
UV = 'uv==0.13.9'


def uv():
    """The uv command, installed with pip once in .work/venvs/uv."""
    venv = config.ROOT / '.work' / 'venvs' / 'uv'
    command = venv / 'bin' / 'uv'
    if not command.exists():
        process.run([sys.executable, '-m', 'venv', venv])
        process.run([venv / 'bin' / 'python', '-m', 'pip', 'install',
                     '--quiet', '--no-input', UV])
    return command


def installer(python, constraints_file):
    """The command that installs packages into the virtualenv of
    `python`, pinned by `constraints_file`.
    """
    return [uv(), 'pip', 'install', '--python', python, '-c',
            constraints_file]


# pbr writes AUTHORS and ChangeLog and derives the version from git tags;
# the tarball already carries all three, so keep the work tree as it is.
PBR_ENV = {'SKIP_GENERATE_AUTHORS': '1', 'SKIP_WRITE_GIT_CHANGELOG': '1',
           'SKIP_GENERATE_RENO': '1'}


def ensure_venv(project):
    """Create (or reuse, when its inputs are unchanged) the test venv."""
    tree = queue.require_tree(project)
    constraints = constraints_for(project)
    inputs = [sys.version, constraints, json.dumps(
        [project.install_extras, project.test_packages,
         project.series_requirements])]
    for name in ('requirements.txt', 'test-requirements.txt', 'setup.cfg',
                 'pyproject.toml', 'doc/requirements.txt'):
        path = tree / name
        inputs.append(path.read_text() if path.exists() else '')
    digest = hashlib.sha256('\0'.join(inputs).encode()).hexdigest()
    stamp = project.venv / 'series-inputs.sha256'
    python = project.venv / 'bin' / 'python'
    if stamp.exists() and stamp.read_text().strip() == digest:
        return python
    process.say(f'{project.name}: building the test virtualenv '
                f'{project.venv.relative_to(config.ROOT)} (pinned by '
                'upper-constraints)')
    shutil.rmtree(project.venv, ignore_errors=True)
    process.run([sys.executable, '-m', 'venv', project.venv])
    constraints_file = project.venv / 'upper-constraints.txt'
    constraints_file.write_text(constraints)
    extras = f'[{",".join(project.install_extras)}]' \
        if project.install_extras else ''
    started = time.monotonic()
    install = installer(python, constraints_file)
    # Each patched requirement first, with its own version for pbr; the
    # project's install then finds it satisfied.
    for required in series_requirements(project):
        process.say(f'{project.name}: installing {required.name} '
                    f'{required.version} with its series, as '
                    f'{required.installed_version}, from '
                    f'{required.tree.relative_to(config.ROOT)}')
        # A path in a .pth file, not an import hook: mypy follows it.
        process.run([*install, '--quiet', '--config-setting',
                     'editable_mode=compat', '-e', required.tree],
                    env=dict(PBR_ENV,
                             PBR_VERSION=required.installed_version))
    doc_requirements = ['-r', tree / 'doc/requirements.txt'] \
        if (tree / 'doc/requirements.txt').exists() else []
    pip_install = subprocess.Popen(
        [str(c) for c in (*install, *test_requirements(tree),
                          *doc_requirements,
                          *project.test_packages, '-e', f'{tree}{extras}')],
        env=dict(os.environ, PBR_VERSION=project.version, **PBR_ENV),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = []
    for line in install_progress(pip_install.stdout, output):
        process.say(line)
    if pip_install.wait() != 0:
        raise config.SeriesError(f'installing the test virtualenv failed '
                                 f'(exit {pip_install.returncode}); uv '
                                 'said:\n' + ''.join(output[-40:]))
    stamp.write_text(digest + '\n')
    process.say(f'{project.name}: virtualenv ready in '
                f'{time.monotonic() - started:.0f}s')
    return python


def test_requirements(tree):
    """pip arguments for the project's test requirements: its
    test-requirements.txt or, in projects that moved to PEP 735, the
    `test` dependency group of pyproject.toml.
    """
    if (tree / 'test-requirements.txt').exists():
        return ['-r', tree / 'test-requirements.txt']
    pyproject = tree / 'pyproject.toml'
    groups = {}
    if pyproject.exists():
        groups = tomllib.loads(pyproject.read_text()).get(
            'dependency-groups', {})
    if 'test' not in groups:
        raise config.SeriesError(f'{tree.name}: neither test-requirements.txt '
                                 'nor a `test` dependency group in '
                                 'pyproject.toml')
    return [requirement for requirement in groups['test']
            if isinstance(requirement, str)]


def series_requirements(project):
    """The projects `project` takes patched, their work trees applied
    when missing. They are installed editable: a later commit in one is
    seen without rebuilding the virtualenv.
    """
    required = [config.get_project(name)
                for name in project.series_requirements]
    for other in required:
        queue.ensure_tree(other)
    return required


def install_progress(lines, output):
    """Condense uv pip install's output into its summary lines.

    Every line is kept in `output` (for an error report); yields uv's
    resolved, prepared, built and installed counts and its errors, not
    the line per package.
    """
    for line in lines:
        output.append(line)
        if line.startswith(('Resolved ', 'Prepared ', 'Built ', 'Installed ',
                            'Uninstalled ', 'error:', '  ×', '  ╰─▶')):
            yield '  uv: ' + line.rstrip()
