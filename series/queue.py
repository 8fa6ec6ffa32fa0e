"""The patch queue: the series file, the work tree, and apply/export
between them.
"""

from pathlib import Path
import shutil
import tempfile

from series import config
from series import pristine
from series import process


# Options that make `git format-patch` output depend on the commits only:
# no version signature, no commit ids, no [PATCH n/m] numbering, full blob
# ids, and no rename diffs, which plain `patch -p1` cannot apply.
FORMAT_PATCH = [
    'format-patch', '--zero-commit', '--no-signature', '--no-numbered',
    '--full-index', '--no-renames', '--no-binary', '--diff-algorithm=myers',
    '--unified=3', '--inter-hunk-context=0', '--src-prefix=a/',
    '--dst-prefix=b/', '--no-color', '--stat=72,50', '--encode-email-headers',
]

# Options of `git am` that keep each commit as exported: its dates, and
# a subject's bracketed prefix ("[component] Subject"), of which git am
# would strip all but [PATCH].
AM_OPTIONS = ['-q', '--keep-non-patch', '--committer-date-is-author-date']

# A file in a work tree's .git naming what runs from the tree (the real
# cloud's services import Nova and Cinder from theirs): apply() refuses
# to rebuild the tree under it.
IN_USE = 'series-in-use'

# Ignored in every work tree: output of tests and builds, never a patch.
WORK_TREE_EXCLUDES = """\
# written by tools/series: test and build output, never part of a patch
/.stestr/
/.tmp/
__pycache__/
*.py[co]
/build/
/doc/build/
/api-ref/build/
/api-guide/build/
/releasenotes/build/
/doc/source/_static/*.sample
/.eggs/
/cover/
/.coverage*
/instances/
object_hashes.txt
# the Go workspace of a Go module's series requirements (go_tests.workspace)
/go.work
/go.work.sum
"""

# Gerrit's commit-msg hook in a few lines: give every new commit a
# Change-Id so the id survives rebases and every later export.
COMMIT_MSG_HOOK = """\
#!/bin/sh
# Installed by tools/series: add a Gerrit Change-Id to new commits.
grep -q '^Change-Id: I[0-9a-f]\\{40\\}$' "$1" && exit 0
case "$(head -n 1 "$1")" in fixup!*|squash!*|amend!*) exit 0 ;; esac
id=$({ git var GIT_COMMITTER_IDENT; cat "$1"; } | git hash-object --stdin)
git interpret-trailers --in-place --trailer "Change-Id: I$id" "$1"
"""


# --- the series file ------------------------------------------------------

def read_series(project):
    """Return the patch names listed in patches/<project>/series."""
    path = project.patches / 'series'
    if not path.exists():
        return []
    names = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        name, *options = line.split()
        if options not in ([], ['-p1']):
            raise config.SeriesError(f'{path}:{number}: only -p1 patches are '
                                     f'supported, got {" ".join(options)}')
        names.append(name)
    return names


def series_text(project, names):
    header = (f'# {project.name} {project.version}: the patches in the order '
              'they apply (quilt series;\n# written by tools/series export)\n')
    return header + ''.join(f'{name}\n' for name in names)


# --- the work tree --------------------------------------------------------

def require_tree(project):
    if not (project.tree / '.git').exists():
        raise config.SeriesError(f'{project.name}: no work tree; run '
                                 f'`tools/series apply {project.name}` first')
    return project.tree


def in_use(project):
    """What runs from the work tree (mark_in_use()), or None."""
    path = project.tree / '.git' / IN_USE
    return path.read_text().strip() if path.exists() else None


def mark_in_use(project, user):
    """Say that `user` runs from the work tree: apply() refuses to
    rebuild it until unmark_in_use().
    """
    (project.tree / '.git' / IN_USE).write_text(user + '\n')


def unmark_in_use(project):
    (project.tree / '.git' / IN_USE).unlink(missing_ok=True)


def ensure_tree(project):
    """The work tree, applied first if there is none."""
    if not (project.tree / '.git').exists():
        apply(project)
    return project.tree


def commits_since_base(tree):
    out = process.git('rev-list', '--reverse', 'base..HEAD', cwd=tree).stdout
    return out.split()


def subject_of(tree, commit):
    return process.git('log', '-1', '--format=%s', commit,
                       cwd=tree).stdout.strip()


def render_patches(tree):
    """Return [(file name, bytes)] for the commits since base, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        out = process.git(*FORMAT_PATCH, '-o', tmp, 'base..HEAD',
                          cwd=tree).stdout
        paths = [Path(line) for line in out.split()]
        return [(p.name, p.read_bytes()) for p in paths]


def uncommitted(tree):
    """Return `git status --porcelain` lines: edits that no commit holds."""
    out = process.git('status', '--porcelain', '--untracked-files=all',
                      cwd=tree)
    return [line for line in out.stdout.splitlines() if line]


def in_progress(tree):
    """Name an unfinished git operation (rebase, am, ...) in the tree."""
    gitdir = tree / '.git'
    for marker, what in (('rebase-merge', 'a rebase'),
                         ('rebase-apply', 'a rebase or am'),
                         ('MERGE_HEAD', 'a merge'),
                         ('CHERRY_PICK_HEAD', 'a cherry-pick')):
        if (gitdir / marker).exists():
            return what
    return None


def unexported(project):
    """Return what the work tree holds that patches/ does not, as text."""
    tree = project.tree
    problems = []
    operation = in_progress(tree)
    if operation:
        problems.append(f'{operation} is in progress in {tree}')
    for line in uncommitted(tree):
        problems.append(f'uncommitted edit in work tree: {line}')
    if process.git('merge-base', '--is-ancestor', 'base', 'HEAD', cwd=tree,
                   check=False).returncode != 0:
        problems.append('HEAD of the work tree does not descend from base')
        return problems
    commits = commits_since_base(tree)
    rendered = render_patches(tree)
    listed = read_series(project)
    for commit, (name, data) in zip(commits, rendered):
        target = project.patches / name
        if not target.exists() or target.read_bytes() != data:
            state = 'differs' if target.exists() else 'missing'
            problems.append(f'commit {commit[:12]} '
                            f'"{subject_of(tree, commit)}" is not exported '
                            f'(patches/{project.name}/{name} {state})')
    rendered_names = [name for name, _ in rendered]
    for name in listed:
        if name not in rendered_names:
            problems.append(f'patches/{project.name}/{name} is in series but '
                            'no work tree commit gives it')
    if listed != rendered_names and set(listed) == set(rendered_names):
        problems.append('series lists the patches in another order than the '
                        'work tree commits')
    return problems


def apply(project, force=False, alternative=''):
    """Build the work tree from the series.

    `alternative` is advice added to the refusal when the tree holds work
    that is not exported.
    """
    tree = project.tree
    user = in_use(project)
    if user:
        raise config.SeriesError(
            f'{project.name}: {user} runs from the work tree {tree}, which '
            'apply would rebuild under it: stop it first')
    if (tree / '.git').exists():
        problems = unexported(project)
        if problems and not force:
            raise config.SeriesError(
                f'{project.name}: the work tree {tree} has work that is not '
                'exported:\n  ' + '\n  '.join(problems) + '\n' +
                keep_advice(project) + alternative +
                '\nor discard it: the same command with --force')
    names = read_series(project)
    for name in names:
        if not (project.patches / name).exists():
            raise config.SeriesError(f'patches/{project.name}/series lists '
                                     f'{name}, which does not exist')
    shutil.rmtree(tree, ignore_errors=True)
    tree.parent.mkdir(parents=True, exist_ok=True)
    pristine.init_base_repo(project, tree)
    (tree / '.git' / 'info').mkdir(exist_ok=True)
    (tree / '.git' / 'info' / 'exclude').write_text(WORK_TREE_EXCLUDES)
    if project.review == 'gerrit':
        hook = tree / '.git' / 'hooks' / 'commit-msg'
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(COMMIT_MSG_HOOK)
        hook.chmod(0o755)
    for name in names:
        result = process.git('am', *AM_OPTIONS,
                             project.patches / name, cwd=tree,
                             env=pristine.TOOL_IDENT, check=False)
        if result.returncode != 0:
            process.git('am', '--abort', cwd=tree, check=False)
            raise config.SeriesError(f'{name} does not apply with git am:\n'
                                     f'{result.stdout.strip()}')
    process.say(f'{project.name}: work tree {tree.relative_to(config.ROOT)} = '
                f'{project.name} {project.version} + '
                f'{plural(len(names), "patch")}')


def keep_advice(project):
    """How to keep what the work tree holds, as commands to run."""
    tree = project.tree
    operation = in_progress(tree)
    if operation:
        return f'finish {operation} in {tree} first (git status says how)'
    steps = []
    if uncommitted(tree):
        steps.append(f'commit the edits (git -C {tree} add -A && git -C '
                     f'{tree} commit)')
    steps.append(f'export the commits (tools/series export {project.name})')
    return 'to keep it: ' + ', then '.join(steps)


def export(project):
    tree = require_tree(project)
    operation = in_progress(tree)
    if operation:
        raise config.SeriesError(f'{operation} is in progress in {tree}; '
                                 'finish it')
    edits = uncommitted(tree)
    if edits:
        raise config.SeriesError(f'{project.name}: commit or discard these '
                                 'edits before exporting:\n  ' +
                                 '\n  '.join(edits))
    rendered = render_patches(tree)
    project.patches.mkdir(parents=True, exist_ok=True)
    keep = {name for name, _ in rendered}
    for old in project.patches.glob('*.patch'):
        if old.name not in keep:
            old.unlink()
    changed = 0
    for name, data in rendered:
        target = project.patches / name
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            changed += 1
    series = project.patches / 'series'
    text = series_text(project, [name for name, _ in rendered])
    if not series.exists() or series.read_text() != text:
        series.write_text(text)
    process.say(f'{project.name}: exported '
                f'{plural(len(rendered), "patch")} to '
                f'patches/{project.name}/ ({changed} changed)')


def rpm_patch_lines(project, start=1):
    """The series as the Patch lines of an RPM spec file, in order.

    Numbered from `start`, to follow a spec file's own Patch lines.
    """
    return [f'Patch{number:04d}: {name}'
            for number, name in enumerate(read_series(project), start)]


def plural(count, noun):
    suffix = 'es' if noun.endswith(('s', 'ch')) else 's'
    return f'{count} {noun}' + ('' if count == 1 else suffix)


def status(project):
    names = read_series(project)
    pinned = f'{project.name} {project.version}'
    what = pristine.release_format(project).WHAT
    verified = pristine.verified(project)
    pinned += {None: f' ({what} not downloaded)', True: f' ({what} verified)',
               False: f' ({what} {project.pin} WRONG)'}[verified]
    line = (f'{project.name}: base {pinned}, '
            f'{plural(len(names), "patch")} in series')
    if not (project.tree / '.git').exists():
        return line + ', no work tree'
    problems = unexported(project)
    commits = len(commits_since_base(project.tree))
    state = 'in sync' if not problems else (
        f'NOT in sync ({plural(len(problems), "problem")}; see tools/series '
        f'check {project.name})')
    return line + f', work tree {plural(commits, "commit")}, {state}'
