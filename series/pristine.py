"""The pinned base: the release sdist (or a Go module's zip,
series.go_module), verified and unpacked, as a git repository whose one
commit is the pristine tree.
"""

import hashlib
from pathlib import Path
import shutil
import sys
import tempfile

from series import config
from series import go_module
from series import process


# Identity and date of the commits this tool makes itself, so that the base
# commit (and every commit `apply` replays) has the same id on every machine.
TOOL_IDENT = {
    'GIT_AUTHOR_NAME': 'tools/series', 'GIT_AUTHOR_EMAIL': 'series@localhost',
    'GIT_COMMITTER_NAME': 'tools/series',
    'GIT_COMMITTER_EMAIL': 'series@localhost',
}
BASE_DATE = '2000-01-01T00:00:00+0000'


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def check_constraints(project):
    """The constraints file projects.toml names must be in the repository."""
    if not project.constraints:
        raise config.SeriesError(f'projects.toml names no constraints file '
                                 f'for {project.name}')
    if not project.constraints_file.is_file():
        raise config.SeriesError(f'{project.constraints} (the constraints of '
                                 f'{project.name} in projects.toml) is not in '
                                 f'the repository')


def fetch_base(project):
    """Return the path of the verified sdist, downloading it if needed."""
    # Every input is checked before anything is downloaded.
    check_constraints(project)
    if project.sdist.exists():
        if sha256_of(project.sdist) == project.sha256:
            return project.sdist
        process.say(f'{project.sdist.name}: cached file has the wrong '
                    'sha256, downloading again')
        project.sdist.unlink()
    project.sdist.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'{project.name}: downloading '
                f'{project.name}=={project.version} sdist from the package '
                'registry')
    with tempfile.TemporaryDirectory(dir=project.sdist.parent) as tmp:
        process.run([sys.executable, '-m', 'pip', 'download', '--no-deps',
                     '--no-binary', ':all:', '--dest', tmp,
                     f'{project.name}=={project.version}'])
        found = list(Path(tmp).glob('*.tar.gz'))
        if len(found) != 1:
            raise config.SeriesError(f'pip download gave {found}, expected '
                                     'one sdist')
        actual = sha256_of(found[0])
        if actual != project.sha256:
            raise config.SeriesError(
                f'{found[0].name}: sha256 {actual} does not match the pin '
                f'{project.sha256} in projects.toml; refusing to use it')
        found[0].rename(project.sdist)
    return project.sdist


def unpack_pristine(project):
    """Return the unpacked pristine tree (a read-only cache)."""
    stamp = project.pristine.with_name(project.pristine.name + '.pin')
    if stamp.exists() and stamp.read_text().strip() == project.digest:
        return project.pristine
    shutil.rmtree(project.pristine, ignore_errors=True)
    project.pristine.mkdir(parents=True)
    if project.kind == 'go':
        go_module.unpack(go_module.fetch(project), project.pristine,
                         f'{project.module}@{project.version}/')
    else:
        process.run(['tar', '-xzf', fetch_base(project), '-C',
                     project.pristine, '--strip-components=1'])
    stamp.write_text(project.digest + '\n')
    return project.pristine


def verified(project):
    """Whether the downloaded release matches its pin; None if it is not
    downloaded.
    """
    if not project.archive.exists():
        return None
    if project.kind == 'go':
        return go_module.hash1(project.archive) == project.h1
    return sha256_of(project.archive) == project.sha256


def init_base_repo(project, path):
    """Make `path` a git repository whose one commit is the pristine base."""
    shutil.copytree(unpack_pristine(project), path, symlinks=True)
    process.git('init', '-q', '-b', 'main', cwd=path)
    commit_pristine(project, path)
    process.git('tag', 'base', cwd=path)


def commit_pristine(project, path):
    """Commit the pristine tree in `path`, with the same id everywhere."""
    env = dict(TOOL_IDENT, GIT_AUTHOR_DATE=BASE_DATE,
               GIT_COMMITTER_DATE=BASE_DATE)
    process.git('add', '-A', '-f', cwd=path)
    pinned = (f'module zip of {project.module}, {project.h1}'
              if project.kind == 'go' else f'sdist, sha256 {project.sha256}')
    process.git('commit', '-q', '--no-verify', '-m',
                f'{project.name} {project.version}\n\nThe pristine release '
                f'{pinned}.', cwd=path, env=env)
