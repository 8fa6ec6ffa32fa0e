"""each: every commit of a series green alone.

For each commit of base..HEAD (or of the patches --from N --to N), a
detached git worktree of that commit, under .work/each/<project>/, runs
the test modules the commit adds or changes with the project's
virtualenv, as `test` runs them (suites.run_suite: stestr, the test-env
of projects.toml), and flake8 on the Python files the commit touches, as
`lint` runs it (the virtualenv's flake8 in the tree, so the project's
own [flake8] configuration and hacking checks apply). The worktree is
the current directory of both, so its code is imported, not the work
tree's: the virtualenv's editable install of the work tree comes after
the current directory on sys.path, and each run checks it.

The work tree's HEAD and files are never touched; each worktree is
removed after its commit, also on failure or interruption.
"""

import dataclasses
from pathlib import Path
import shutil
import time

from series import config
from series import go_tests
from series import process
from series import queue
from series import selection
from series import suites
from series import virtualenvs

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


def test_modules_of(project, files):
    """(unit, functional): the dotted test modules among `files`, the
    test_*.py files under the project's test directories.
    """
    unit, functional = [], []
    for path in files:
        if not (Path(path).name.startswith('test_') and
                path.endswith('.py')):
            continue
        # Functional first: a functional directory may be inside the unit
        # one.
        if project.functional_tests and path.startswith(
                project.functional_tests + '/'):
            functional.append(selection.module_of(path))
        elif project.unit_tests and path.startswith(
                project.unit_tests + '/'):
            unit.append(selection.module_of(path))
    return sorted(unit), sorted(functional)


def python_files(files):
    return [path for path in files if path.endswith('.py')]


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


def imported_from(python, worktree, package, env):
    """The file `import <package>` loads from `worktree`, or '' if the
    import fails (the commit's tests then fail and say why).
    """
    proc = process.run([python, '-c', f'import {package}; '
                        f'print({package}.__file__)'], cwd=worktree,
                       env=dict(env, PYTHONDONTWRITEBYTECODE='1'),
                       check=False)
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if proc.returncode == 0 and lines else ''


def check_imports_commit(project, python, worktree, label):
    """Refuse to go on if the tests would import another tree's code."""
    path = imported_from(python, worktree, project.package, project.test_env)
    if path and not Path(path).resolve().is_relative_to(worktree.resolve()):
        raise config.SeriesError(
            f'{project.name} {label}: `import {project.package}` from the '
            f'commit\'s worktree {worktree} loads {path}; its tests would '
            'not test the commit')
    if path:
        process.say(f'{project.name} {label}: {project.package} imported '
                    f'from {path}')


def run_tests(project, python, label, unit, functional):
    """stestr on the unit and functional modules, each its own run with
    its own --test-path, in `project.tree` (the commit's worktree).
    """
    results = []
    for kind, test_path, modules in (
            ('unit', project.unit_tests, unit),
            ('functional', project.functional_tests, functional)):
        if modules:
            results.append(suites.run_suite(
                project, python, f'each-{label}-{kind}', test_path,
                selection.regex_for_modules(modules)))
    return results


def run_flake8(python, worktree, files):
    """flake8 as `tools/series lint` runs it: the virtualenv's flake8, in
    the tree, on the files. Returns True when clean.
    """
    proc = process.run([python.parent / 'flake8', *files], cwd=worktree,
                       check=False)
    if proc.returncode != 0:
        process.say(f'flake8 found problems:\n{proc.stdout}')
    return proc.returncode == 0


def check_commit(project, python, number, commit, subject,
                 run_tests=run_tests, run_flake8=run_flake8):
    """The tests the commit adds or changes and flake8 on its Python
    files, in a worktree of the commit; its row of the table.
    """
    started = time.monotonic()
    label = f'{number:04d}'
    files = files_of_commit(project.tree, commit)
    unit, functional = test_modules_of(project, files)
    row = {'number': number, 'subject': subject,
           'modules': unit + functional, 'passed': 0, 'failed': 0,
           'skipped': 0, 'flake8': '-'}
    process.say(f'{project.name} {label}: {subject}')
    for module in unit + functional:
        process.say(f'  {module}')
    worktree = worktree_directory(project) / label
    try:
        add_worktree(project.tree, worktree, commit)
        if project.kind == 'go':
            go_commit(at_commit(project, worktree), label, files, row)
            unit = row['modules']
        elif unit or functional:
            check_imports_commit(project, python, worktree, label)
            for result in run_tests(at_commit(project, worktree), python,
                                    label, unit, functional):
                row['passed'] += result.passed
                row['failed'] += result.failed
                row['skipped'] += result.skipped
        if python_files(files) and project.kind == 'python':
            clean = run_flake8(python, worktree, python_files(files))
            row['flake8'] = 'clean' if clean else 'failed'
    finally:
        remove_worktree(project.tree, worktree)
    if row['failed'] or row['flake8'] == 'failed':
        row['result'] = 'failed'
    elif unit or functional:
        row['result'] = 'passed'
    else:
        row['result'] = 'skipped'
    row['seconds'] = time.monotonic() - started
    return row


def go_commit(project, label, files, row):
    """A commit of a Go module, in its worktree (`project.tree`): go test
    of the packages of its Go files that have tests without build tags,
    gofmt and go vet of those files (built with the project's tags: a
    commit of acceptance tests alone is vetted, its tests not run); into
    its `row`.
    """
    packages = go_tests.with_tests(project, project.tree,
                                   go_tests.packages(project.tree, files))
    row['modules'] = packages
    if packages:
        result = go_tests.run(project, packages, f'each-{label}-unit')
        row['passed'] += result.passed
        row['failed'] += result.failed
        row['skipped'] += result.skipped
    go_files = [name for name in files if name.endswith('.go')]
    if go_files:
        style = go_tests.lint_files(project, project.tree, go_files)
        row['flake8'] = 'failed' if style.failed else 'clean'


def run_commits(project, python, commits, run_tests=run_tests,
                run_flake8=run_flake8):
    """check_commit for each of `commits`; their rows."""
    remove_leftover_worktrees(project)
    try:
        return [check_commit(project, python, number, commit, subject,
                             run_tests, run_flake8)
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
                f'{"flake8":<6} {"secs":>5}  result')
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
                    f'{row["flake8"]:<6} {row["seconds"]:>5.0f}  '
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
    python = (virtualenvs.ensure_venv(project) if project.kind == 'python'
              else None)
    where = worktree_directory(project).relative_to(config.ROOT)
    process.say(f'{project.name}: {queue.plural(len(commits), "commit")}, '
                f'each in a worktree under {where}/ with only the commits '
                'before it')
    return run_commits(project, python, commits)
