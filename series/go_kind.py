"""A Go module (projects.toml kind "go"), as series.kinds sees it: its
tests are `go test` of the packages the series touches, its style checks
`go vet` and gofmt (series.go_tests), its types the compiler's. The go
command needs no environment of the project's: its modules and builds
are cached under .work/go (series.go_module).
"""

from series import config
from series import go_tests
from series import process

# The verbs a Go module has no counterpart for: the Python project's
# docs build, its database contract, its benchmarks and its RPM patches.
UNSUPPORTED_VERBS = ('docs', 'contract', 'bench', 'rpm-patches')


def environment(project):
    """None: the go command is the environment."""
    return None


# suites.test()'s options a Go module has no counterpart for, with the
# value that asks for nothing.
UNSUPPORTED_OPTIONS = {'filters': [], 'full': False, 'databases': False,
                       'concurrency': None, 'unit': True,
                       'functional': True}


def test(project, **options):
    """go test of the packages the series touches; of suites.test()'s
    `options` a Go module takes `background` only, and refuses the
    others rather than run what was not asked for.
    """
    asked = sorted(name for name, default in UNSUPPORTED_OPTIONS.items()
                   if options.get(name, default) not in (default, None, ()))
    if asked:
        raise config.SeriesError(
            f'{project.name} is a Go module: its tests are go test of the '
            f'packages the series touches; {", ".join(asked)} are a Python '
            'project\'s')
    return go_tests.test(project,
                         background=options.get('background', False))


def lint(project):
    return go_tests.lint(project)


def typecheck(project):
    """None: the types are the compiler's, and lint's go vet builds every
    package it checks.
    """
    return None


def prepare_copy(project, environment, tree, label):
    """The copy's Go workspace, where the project has series
    requirements: the go command builds the copy's own code against
    them.
    """
    go_tests.workspace(project, tree)


# The files of a module's requirements: a commit that changes them
# changes the build of every package.
MODULE_FILES = ('go.mod', 'go.sum')


def test_commit(project, environment, label, files, row):
    """A commit in its worktree (`project.tree`): go test of the packages
    of its Go files that have tests without build tags, gofmt and go vet
    of those files (built with the project's tags: a commit of acceptance
    tests alone is vetted, its tests not run); into its `row`. A commit
    that changes the module's requirements (a dependency bump) is tested
    with the packages the whole series touches (those it lacks have no
    tests to run: go_tests.with_tests).
    """
    go_tests.workspace(project, project.tree)
    touched = go_tests.packages(project.tree, files)
    if any(name in MODULE_FILES for name in files):
        touched += [
            package
            for package in go_tests.series_packages(project.series_tree)
            if package not in touched]
    packages = go_tests.with_tests(project, project.tree, touched)
    row['modules'] = packages
    for package in packages:
        process.say(f'  {package}')
    if packages:
        result = go_tests.run(project, packages, f'each-{label}-unit')
        row['passed'] += result.passed
        row['failed'] += result.failed
        row['skipped'] += result.skipped
    go_files = [name for name in files if name.endswith('.go')]
    if go_files:
        style = go_tests.lint_files(project, project.tree, go_files)
        row['style'] = 'failed' if style.failed else 'clean'


def run_ids(project, environment, tests, suite):
    """The tests `tests` (`<package>.<Test>`) alone: one SuiteResult."""
    go_tests.workspace(project, project.tree)
    return go_tests.run_ids(project, tests, suite)
