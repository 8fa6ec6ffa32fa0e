"""Moving a series onto another release of its project.

`tools/series rebase <project> <version>` fetches the release, checks it
against its pin (--pin, or what the package index or the Go module
proxy publishes: series.pristine's release formats), and replays the
series onto it with `git am -3` in the work tree. On a
conflict it stops, as git does, with instructions; `--continue` takes
over once the user has finished `git am`. The new base is pinned in
projects.toml only when the result checks clean.
"""

import dataclasses
import json
import shutil

from series import checks
from series import config
from series import pristine
from series import process
from series import queue

# The branch the series is replayed on, renamed `main` once it is done.
REBASE_BRANCH = 'rebased'


def state_file(project):
    return config.ROOT / '.work' / 'rebase' / f'{project.name}.json'


def rebase(project, version, pin=None, index=None):
    """Replay the series of `project` onto release `version`, pinned by
    `pin` or by what `index` (the package index or Go module proxy; by
    default the release format's) publishes; given both, they must agree.
    """
    if version == project.version:
        raise config.SeriesError(f'{project.name} is already on {version}')
    if (project.tree / '.git').exists() and queue.unexported(project):
        # Refused before anything is downloaded or changed.
        queue.apply(project)
    release = pristine.release_format(project)
    if index or not pin:
        published = release.published_pin(project, version, index)
        if pin and pin != published:
            raise config.SeriesError(
                f'{project.name} {version}: --pin {pin} is not what '
                f'{index} publishes ({published})')
        pin = published
    target = dataclasses.replace(project, version=version,
                                 **{project.pin: pin})
    process.say(f'{project.name}: {version} {release.describe(target)}')
    new_pristine = pristine.unpack_pristine(target)
    # The work tree as the series gives it on the current base: the blobs
    # the patches name must be in the repository for git am -3.
    queue.apply(project)
    tree = project.tree
    process.git('checkout', '-q', '--orphan', REBASE_BRANCH, cwd=tree)
    process.git('rm', '-r', '-q', '-f', '.', cwd=tree)
    shutil.copytree(new_pristine, tree, symlinks=True, dirs_exist_ok=True)
    pristine.commit_pristine(target, tree)
    process.git('tag', '-f', 'base', cwd=tree)
    path = state_file(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({'version': target.version,
                                project.pin: target.digest}))
    names = queue.read_series(project)
    for number, name in enumerate(names, 1):
        result = process.git(
            'am', *queue.AM_OPTIONS, '-3', project.patches / name, cwd=tree,
            env=pristine.TOOL_IDENT, check=False)
        if result.returncode != 0:
            raise config.SeriesError(
                f'{name} ({number} of {len(names)}) does not apply to '
                f'{project.name} {version}:\n{result.stdout.strip()}\n\n'
                f'Resolve it in {tree} as git says (git status, edit, git '
                'add), run `git am --continue` there until every patch is '
                f'applied, then `tools/series rebase {project.name} '
                '--continue`. projects.toml still pins '
                f'{project.version}; `tools/series apply {project.name} '
                '--force` goes back to it.')
    return finish(project)


def finish(project):
    """Export the rebased series and pin its base if it checks clean."""
    path = state_file(project)
    if not path.exists():
        raise config.SeriesError(f'no rebase of {project.name} is in '
                                 'progress')
    state = json.loads(path.read_text())
    target = dataclasses.replace(project, **state)
    tree = queue.require_tree(project)
    operation = queue.in_progress(tree)
    if operation:
        raise config.SeriesError(f'{operation} is in progress in {tree}; '
                                 'finish it first (git am --continue)')
    # The work tree may have been rebuilt since (apply --force).
    base_subject = queue.subject_of(tree, 'base')
    if base_subject != f'{target.name} {target.version}':
        path.unlink()
        raise config.SeriesError(
            f'the work tree is on "{base_subject}", not on {target.name} '
            f'{target.version}: the rebase was abandoned; start it again '
            f'(tools/series rebase {project.name} {target.version})')
    process.git('branch', '-M', 'main', cwd=tree)
    before = {p: p.read_bytes() for p in project.patches.iterdir()}
    queue.export(target)
    problems = checks.check(target)
    if problems:
        for stale in set(project.patches.iterdir()) - set(before):
            stale.unlink()
        for patch, data in before.items():
            patch.write_bytes(data)
        raise config.SeriesError(
            f'the series rebased onto {target.version} does not check '
            'clean; patches/ and projects.toml are unchanged:\n  ' +
            '\n  '.join(problems))
    config.pin_base(project, target.version, target.digest)
    path.unlink()
    process.say(f'{project.name}: the series now applies to '
                f'{target.version}; projects.toml pins it ({project.pin} '
                f'{target.digest})')
