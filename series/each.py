"""each: every commit of a series green alone.

For each commit of base..HEAD (or of the patches --from N --to N), a
detached git worktree of that commit, under .work/each/<project>/, runs
the tests of what the commit adds or changes and the style checks of its
files, as its kind does them (series.kinds: test_commit).

The work tree's HEAD and files are never touched; each worktree is
removed after its commit, also on failure or interruption.
"""

import dataclasses
from pathlib import Path
import shutil
import time

from series import config
from series import kinds
from series import process
from series import queue
from series import suites

NO_TEST_MODULE = 'no test module changed'


@dataclasses.dataclass
class ProjectAtCommit(config.Project):
    """The project with its tree at a commit's worktree: run_suite runs
    stestr in `project.tree`.
    """
    worktree: Path = None

    @property
    def tree(self):
        return self.worktree

    @property
    def series_tree(self):
        """The project's work tree, at the series' last commit."""
        return config.Project.tree.fget(self)


def at_commit(project, worktree):
    return ProjectAtCommit(**dataclasses.asdict(project), worktree=worktree)


def numbered_commits(tree):
    """[(number, commit, subject)] of base..HEAD, numbered as the patches."""
    return [(number, commit, queue.subject_of(tree, commit))
            for number, commit in enumerate(queue.commits_since_base(tree),
                                            start=1)]


def select_range(commits, first=None, last=None):
    """The commits of patches `first` to `last` (both included)."""
    first = 1 if first is None else first
    last = len(commits) if last is None else last
    if not 1 <= first <= last <= len(commits):
        raise config.SeriesError(
            f'--from {first} --to {last}: the series has patches 1 to '
            f'{len(commits)}' if commits else 'the series has no patches')
    return commits[first - 1:last]


def files_of_commit(tree, commit):
    """The files `commit` adds or changes (not those it deletes)."""
    out = process.git('diff-tree', '-r', '--no-commit-id', '--name-only',
                      '--no-renames', '--diff-filter=d', commit,
                      cwd=tree).stdout
    return out.split()


def worktree_directory(project):
    return config.ROOT / '.work' / 'each' / project.name


def add_worktree(tree, path, commit):
    """A detached worktree of `commit` at `path`; the tree's HEAD stays."""
    remove_worktree(tree, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # --force: a worktree whose directory was deleted is still registered.
    process.git('worktree', 'add', '--force', '--detach', path, commit,
                cwd=tree)


def remove_worktree(tree, path):
    process.git('worktree', 'remove', '--force', path, cwd=tree, check=False)
    shutil.rmtree(path, ignore_errors=True)


def remove_leftover_worktrees(project):
    """The worktrees an earlier run killed before its cleanup left."""
    directory = worktree_directory(project)
    if directory.is_dir():
        for path in sorted(directory.iterdir()):
            remove_worktree(project.tree, path)


def check_commit(project, environment, number, commit, subject):
    """The commit's own tests and style checks, as its kind runs them, in
    a worktree of the commit; its row of the table.
    """
    started = time.monotonic()
    label = f'{number:04d}'
    files = files_of_commit(project.tree, commit)
    row = {'number': number, 'subject': subject, 'modules': [],
           'passed': 0, 'failed': 0, 'skipped': 0, 'style': '-'}
    process.say(f'{project.name} {label}: {subject}')
    worktree = worktree_directory(project) / label
    try:
        add_worktree(project.tree, worktree, commit)
        kinds.of(project).test_commit(at_commit(project, worktree),
                                      environment, label, files, row)
    finally:
        remove_worktree(project.tree, worktree)
    if row['failed'] or row['style'] == 'failed':
        row['result'] = 'failed'
    elif row['modules']:
        row['result'] = 'passed'
    else:
        row['result'] = 'skipped'
    row['seconds'] = time.monotonic() - started
    return row


def run_commits(project, environment, commits):
    """check_commit for each of `commits`; their rows."""
    remove_leftover_worktrees(project)
    try:
        return [check_commit(project, environment, number, commit, subject)
                for number, commit, subject in commits]
    finally:
        try:
            worktree_directory(project).rmdir()
        except OSError:
            pass


def shorten(text, width):
    return text if len(text) <= width else text[:width - 3] + '...'


def module_names(project, modules):
    """The modules without `<package>.tests.`, which they all share."""
    prefix = f'{project.package}.tests.'
    return ', '.join(module.removeprefix(prefix) for module in modules)


def print_rows(project, rows):
    """One row per commit, then "N passed, N failed"; 1 if any failed."""
    process.say('')
    process.say(f'{"#":<4}  {"subject":<40}  {"test modules":<40}  '
                f'{"passed":>6} {"failed":>6} {"skipped":>7}  '
                f'{"style":<6} {"secs":>5}  result')
    for row in rows:
        if row['modules']:
            modules = module_names(project, row['modules'])
            counts = (f'{row["passed"]:>6} {row["failed"]:>6} '
                      f'{row["skipped"]:>7}')
        else:
            modules = NO_TEST_MODULE
            counts = f'{"-":>6} {"-":>6} {"-":>7}'
        process.say(f'{row["number"]:04d}  {shorten(row["subject"], 40):<40}'
                    f'  {shorten(modules, 40):<40}  {counts}  '
                    f'{row["style"]:<6} {row["seconds"]:>5.0f}  '
                    f'{row["result"]}')
    passed = sum(row['result'] == 'passed' for row in rows)
    failed = sum(row['result'] == 'failed' for row in rows)
    skipped = len(rows) - passed - failed
    if skipped:
        process.say(f'{skipped} skipped ({NO_TEST_MODULE})')
    process.say(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


def each(project, first=None, last=None):
    """The verb: every commit of the range with only the commits before
    it; the exit status.
    """
    return print_rows(project, checked_rows(project, first, last))


def suite(project):
    """Every commit of the series with only the commits before it, as a
    SuiteResult (CI): a commit counts as passed, failed, or skipped where
    it changes no test module.
    """
    result = suites.SuiteResult(name=f'{project.name} each commit alone')
    started = time.monotonic()
    try:
        rows = checked_rows(project)
    except config.SeriesError as problem:
        result.fail(str(problem))
        return result
    print_rows(project, rows)
    results = [row['result'] for row in rows]
    result.passed = results.count('passed')
    result.failed = results.count('failed')
    result.skipped = results.count('skipped')
    result.error = ', '.join(f'{row["number"]:04d} failed' for row in rows
                             if row['result'] == 'failed')
    result.seconds = round(time.monotonic() - started, 1)
    return result


def checked_rows(project, first=None, last=None):
    """check_commit's row of each commit of the range."""
    tree = queue.require_tree(project)
    busy = queue.in_progress(tree)
    if busy:
        raise config.SeriesError(f'{project.name}: {busy} is in progress in '
                                 f'{tree}; finish it first')
    commits = select_range(numbered_commits(tree), first, last)
    environment = kinds.of(project).environment(project)
    where = worktree_directory(project).relative_to(config.ROOT)
    process.say(f'{project.name}: {queue.plural(len(commits), "commit")}, '
                f'each in a worktree under {where}/ with only the commits '
                'before it')
    return run_commits(project, environment, commits)
