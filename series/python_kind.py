"""A Python project (projects.toml kind "python"), as series.kinds sees
it: its tests are stestr suites run with its virtualenv (series.suites),
its style checks flake8 with its hacking checks (series.linters), its
types mypy.

A commit's tests (`tools/series each`) are the test modules it adds or
changes, run in the commit's worktree as `test` runs them, and flake8 on
its Python files as `lint` runs it (the virtualenv's flake8 in the tree,
so the project's own [flake8] configuration and hacking checks apply).
The worktree is the current directory of both, so its code is imported,
not the work tree's: the virtualenv's editable install of the work tree
comes after the current directory on sys.path, and each run checks it.
"""

from pathlib import Path

from series import config
from series import linters
from series import process
from series import selection
from series import suites
from series import virtualenvs

# Every verb of tools/series takes a Python project.
UNSUPPORTED_VERBS = ()


def environment(project):
    """The virtualenv's Python that runs the project's tests."""
    return virtualenvs.ensure_venv(project)


def test(project, **options):
    return suites.test(project, **options)


def lint(project):
    return linters.lint(project)


def typecheck(project):
    return linters.typecheck(project)


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


def check_imports(project, python, worktree, label):
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


def prepare_copy(project, python, tree, label):
    """Before a copy of the tree (a commit's worktree, the mutants') is
    tested: its tests must import its code.
    """
    check_imports(project, python, tree, label)


def run_modules(project, python, label, unit, functional):
    """stestr on the unit and functional modules, each its own run with
    its own --test-path, in `project.tree` (the commit's worktree).
    """
    results = []
    for suite, test_path, modules in (
            ('unit', project.unit_tests, unit),
            ('functional', project.functional_tests, functional)):
        if modules:
            results.append(suites.run_suite(
                project, python, f'each-{label}-{suite}', test_path,
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


def test_commit(project, python, label, files, row):
    """The test modules among the commit's `files` and flake8 on its
    Python files, in the commit's worktree (`project.tree`); into its
    `row`.
    """
    unit, functional = test_modules_of(project, files)
    row['modules'] = unit + functional
    for module in row['modules']:
        process.say(f'  {module}')
    if row['modules']:
        prepare_copy(project, python, project.tree, label)
        for result in run_modules(project, python, label, unit, functional):
            row['passed'] += result.passed
            row['failed'] += result.failed
            row['skipped'] += result.skipped
    if python_files(files):
        clean = run_flake8(python, project.tree, python_files(files))
        row['style'] = 'clean' if clean else 'failed'


def test_path(project, test):
    """The directory of the test's module: stestr imports every module of
    its test path to discover tests, so the narrowest one is the fastest.
    """
    parts = test.split('.')
    for end in range(len(parts), 0, -1):
        module = Path(*parts[:end])
        if (project.tree / module.with_suffix('.py')).exists():
            return str(module.parent)
        if (project.tree / module / '__init__.py').exists():
            return str(module)
    return project.unit_tests


def run_ids(project, python, tests, suite):
    """suites.run_suite() of `tests` (ids of tests, classes or modules),
    grouped by test path: one SuiteResult.
    """
    total = suites.SuiteResult(name=suite)
    paths = {}
    for test in tests:
        paths.setdefault(test_path(project, test), []).append(test)
    for path, group in paths.items():
        result = suites.run_suite(project, python, suite, path,
                                  selection.regex_for_modules(group))
        total.results.update(result.results)
        total.seconds += result.seconds
        total.error = '; '.join(filter(None, [total.error, result.error]))
    total.count()
    return total
