"""The pinned base: the release, verified and unpacked, as a git
repository whose one commit is the pristine tree. Each kind of project
has its release format (FORMATS), a module with the same functions:
archive, fetch, unpack, verified and describe of a project, and
published_pin of one of its versions; and WHAT, the name of its release
(its pin is projects.toml's field config.PINS names).
"""

import shutil

from series import go_module
from series import process
from series import sdist

FORMATS = {'python': sdist, 'go': go_module}


# Identity and date of the commits this tool makes itself, so that the base
# commit (and every commit `apply` replays) has the same id on every machine.
TOOL_IDENT = {
    'GIT_AUTHOR_NAME': 'tools/series', 'GIT_AUTHOR_EMAIL': 'series@localhost',
    'GIT_COMMITTER_NAME': 'tools/series',
    'GIT_COMMITTER_EMAIL': 'series@localhost',
}
BASE_DATE = '2000-01-01T00:00:00+0000'


def release_format(project):
    """The module that pins, fetches, verifies, unpacks and describes the
    project's releases (its `kind` in projects.toml).
    """
    return FORMATS[project.kind]


def fetch_base(project):
    """The path of the verified release, downloaded if needed."""
    return release_format(project).fetch(project)


def unpack_pristine(project):
    """Return the unpacked pristine tree (a read-only cache)."""
    stamp = project.pristine.with_name(project.pristine.name + '.pin')
    if stamp.exists() and stamp.read_text().strip() == project.digest:
        return project.pristine
    shutil.rmtree(project.pristine, ignore_errors=True)
    project.pristine.mkdir(parents=True)
    release_format(project).unpack(project, project.pristine)
    stamp.write_text(project.digest + '\n')
    return project.pristine


def verified(project):
    """Whether the downloaded release matches its pin; None if it is not
    downloaded.
    """
    release = release_format(project)
    if not release.archive(project).exists():
        return None
    return release.verified(project)


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
    pinned = release_format(project).describe(project)
    process.git('commit', '-q', '--no-verify', '-m',
                f'{project.name} {project.version}\n\nThe pristine release '
                f'{pinned}.', cwd=path, env=env)
