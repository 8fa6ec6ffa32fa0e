"""Which release of Nova and Cinder each part of the cloud runs: the
series (the cloud's virtualenv, the patched work trees) or the pristine
releases (Nova 34.0.0 and Cinder 29.0.0 as the pinned sdists ship them),
for the rolling upgrade (series.cloud.upgrade).

The pristine releases are installed without their dependencies into a
directory of their own that a service finds first on PYTHONPATH: they
run on the cloud's virtualenv (the same pinned libraries the series
runs on, as an operator's packages would be), with their own code, data
files and metadata. The libraries Nova's series requires patched
(os-traits, see series.cloud.service_venv) are the virtualenv's for both:
Nova 34.0.0 runs with the patched os-traits and just does not report its
new trait. What runs where is kept in .work/cloud/releases.json until `cloud
down`; without it everything runs the series.
"""

import json
import os
from pathlib import Path

from series.cloud import layout
from series.cloud import service_venv
from series import config
from series import pristine
from series import process
from series import virtualenvs

SERIES = 'series'
PRISTINE = 'pristine'
# The parts that are upgraded one at a time: Nova's and Cinder's control
# services (API, conductor, scheduler, cinder-volume, the database
# schemas), and each compute host's nova-compute.
CONTROL = 'control'
PROJECTS = ('nova', 'cinder')


def pristine_path():
    return config.ROOT / '.work' / 'venvs' / 'cloud-pristine'


def ensure_pristine():
    """Install the pinned Nova and Cinder sdists, unless done."""
    target = pristine_path()
    projects = [config.get_project(name) for name in PROJECTS]
    wanted = '\n'.join(f'{project.name} {project.sha256}'
                       for project in projects) + '\n'
    stamp = target / 'series-inputs'
    if stamp.exists() and stamp.read_text() == wanted:
        return target
    process.run(['rm', '-rf', target])
    sdists = [pristine.fetch_base(project) for project in projects]
    for project, sdist in zip(projects, sdists):
        process.say(f'cloud: installing pristine {project.name} '
                    f'{project.version} (the sdist, no dependencies)')
        process.run([service_venv.bin('python'), '-m', 'pip', 'install',
                     '--quiet', '--no-input', '--no-deps',
                     '--target', target, sdist],
                    env=dict(virtualenvs.PBR_ENV, PBR_VERSION=project.version))
    stamp.write_text(wanted)
    return target


def state_path():
    return layout.directory() / 'releases.json'


def current():
    """{part: SERIES or PRISTINE} of CONTROL and each compute host's name
    that runs the pristine release; every other part runs the series.
    """
    try:
        return json.loads(state_path().read_text())
    except FileNotFoundError:
        return {}


def release_of(part):
    return current().get(part, SERIES)


def set_release(part, release):
    if release not in (SERIES, PRISTINE):
        raise ValueError(release)
    releases = current()
    releases[part] = release
    state_path().parent.mkdir(parents=True, exist_ok=True)
    state_path().write_text(json.dumps(releases, sort_keys=True) + '\n')


def environment(part):
    """What a process of `part` needs in its environment to run the
    release `part` is on.
    """
    if release_of(part) == PRISTINE:
        return {'PYTHONPATH': str(pristine_path())}
    return {}


def running_release(pid):
    """SERIES or PRISTINE: what the running process `pid` imports, read
    from its own environment (/proc/PID/environ), not from a new Python:
    the pristine releases only with their directory first on its
    PYTHONPATH. None when that environment is blank: oslo.service's
    setproctitle writes the process title over it (nova-conductor,
    nova-scheduler).
    """
    entries = Path(f'/proc/{pid}/environ').read_bytes().split(b'\0')
    environ = dict(entry.split(b'=', 1) for entry in entries if b'=' in entry)
    if not environ:
        return None
    path = environ.get(b'PYTHONPATH', b'').decode().split(os.pathsep)
    return PRISTINE if path[0] == str(pristine_path()) else SERIES


def imported_from(part):
    """{project: the directory its package is imported from} in the
    environment of `part`'s processes.
    """
    code = (f'import importlib, os\n'
            f'for name in {PROJECTS!r}:\n'
            f'    module = importlib.import_module(name)\n'
            f'    print(f"{{name}}={{os.path.dirname(module.__file__)}}")')
    # Importing Cinder warns on standard error, which run() merges.
    output = process.run([service_venv.bin('python'), '-c', code],
                         env=environment(part), cwd='/')
    return dict(line.split('=', 1) for line in output.stdout.splitlines()
                if line.split('=', 1)[0] in PROJECTS)
