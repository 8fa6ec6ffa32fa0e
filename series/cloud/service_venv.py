"""The real cloud's one virtualenv: every service, pinned by the
repository's constraints, Nova and Cinder from their patched work trees,
and the libraries whose patched trees Nova's series requires (os-traits:
placement syncs the standard traits from it and refuses a compute's
trait it does not know).
"""

import hashlib
import json
import os
from pathlib import Path
import subprocess
import sys
import sysconfig
import time

from series import config
from series import process
from series import queue
from series import virtualenvs

# The 2026.2 releases of the services we do not patch, and uWSGI (not in
# upper-constraints), from PyPI.
RELEASES = ('keystone==30.0.0', 'openstack-placement==16.0.0',
            'glance==33.0.0', 'neutron==29.0.0', 'uWSGI==2.0.31')
# Packages the services need that their requirements leave out:
# the MySQL driver, libvirt-python for nova-compute's libvirt driver
# (built against Debian's libvirt-dev), and pyroute2, which neutron
# 29.0.0's wheel metadata drops (its requirement carries an environment
# marker) although neutron-db-manage imports it.
EXTRAS = ('PyMySQL', 'libvirt-python', 'pyroute2')
# The services run from their patched work trees; the series_requirements
# projects.toml gives them are installed from theirs too, first.
PATCHED = ('nova', 'cinder')
# Debian's Ceph bindings (python3-rados, python3-rbd) for Cinder's RBD
# driver: not on PyPI, made visible to the virtualenv.
CEPH_MODULES = ('rados', 'rbd')
DEBIAN_PYTHON = Path('/usr/lib/python3/dist-packages')


def path():
    return config.ROOT / '.work' / 'venvs' / 'cloud'


def bin(name):
    return path() / 'bin' / name


def ensure():
    """Build the virtualenv unless its inputs are unchanged; return its
    python.
    """
    projects = patched_projects()
    constraints = constraints_for(projects)
    inputs = [sys.version, constraints, json.dumps([RELEASES, EXTRAS])]
    for project in projects:
        inputs += [project.name, project.version, project.installed_version,
                   (project.tree / 'requirements.txt').read_text()]
    digest = hashlib.sha256('\0'.join(inputs).encode()).hexdigest()
    venv = path()
    stamp = venv / 'series-inputs.sha256'
    python = venv / 'bin' / 'python'
    if stamp.exists() and stamp.read_text().strip() == digest:
        return python
    process.say(f'cloud: building the virtualenv '
                f'{venv.relative_to(config.ROOT)} (pinned by '
                'upper-constraints; a few minutes)')
    started = time.monotonic()
    process.run(['rm', '-rf', venv])
    process.run([sys.executable, '-m', 'venv', venv])
    constraints_file = venv / 'upper-constraints.txt'
    constraints_file.write_text(constraints)
    install_command = virtualenvs.installer(python, constraints_file)
    # The patched trees editable, each with its own version for pbr: the
    # installs-as projects.toml gives where another series requires it
    # (os-traits as 3.9.0+multiattach.1, which Nova's series requires).
    for project in projects:
        installed_as = (f', as {project.installed_version}'
                        if project.installed_version != project.version
                        else '')
        process.say(f'cloud: installing {project.name} {project.version} '
                    f'with its series{installed_as}')
        process.run([*install_command, '--quiet', '-e', project.tree],
                    env=dict(virtualenvs.PBR_ENV,
                             PBR_VERSION=project.installed_version))
    install = subprocess.Popen(
        [str(c) for c in (*install_command, *RELEASES, *EXTRAS)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = []
    for line in virtualenvs.install_progress(install.stdout, output):
        process.say(line)
    if install.wait() != 0:
        raise config.SeriesError('installing the cloud virtualenv failed; '
                                 'uv said:\n' + ''.join(output[-40:]))
    link_ceph_modules(venv)
    stamp.write_text(digest + '\n')
    process.say(f'cloud: virtualenv ready in '
                f'{time.monotonic() - started:.0f}s')
    return python


def patched_projects():
    """The projects installed from their patched work trees, in install
    order: each service of PATCHED after its series requirements. Missing
    work trees are applied.
    """
    projects = []
    for name in PATCHED:
        project = config.get_project(name)
        for required in virtualenvs.series_requirements(project):
            if required.name not in [p.name for p in projects]:
                projects.append(required)
        queue.ensure_tree(project)
        projects.append(project)
    return projects


def constraints_for(projects):
    """upper-constraints without any of the patched projects: the lines
    virtualenvs.constraints_for keeps for every one of them.
    """
    kept = [virtualenvs.constraints_for(project).splitlines(keepends=True)
            for project in projects]
    common = set.intersection(*map(set, kept))
    return ''.join(line for line in kept[0] if line in common)


def link_ceph_modules(venv):
    site = Path(subprocess.run(
        [venv / 'bin' / 'python', '-c',
         'import sysconfig; print(sysconfig.get_path("purelib"))'],
        check=True, text=True, stdout=subprocess.PIPE).stdout.strip())
    suffix = sysconfig.get_config_var('EXT_SUFFIX')
    for module in CEPH_MODULES:
        found = DEBIAN_PYTHON / f'{module}{suffix}'
        if not found.exists():
            raise config.SeriesError(f'{found} is missing: install '
                                     f'python3-{module}')
        link = site / found.name
        if not link.exists():
            os.symlink(found, link)
