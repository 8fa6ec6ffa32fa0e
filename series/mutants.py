"""`tools/series mutants`: every guard the series adds is tested.

mutants.toml, at the repository's root, is the catalogue: each mutant
replaces one exact text of a file in a project's work tree (`find`, which
must occur there once) by `replace`, which removes or inverts one guard
the series adds, and names the tests that must fail with it. The verb
first runs each project's catalogue tests on the work tree as it is (they
must pass: the control), then, for each mutant, writes it into the work
tree, runs its tests as the project's kind runs them (series.kinds:
run_ids), and puts the file back, also on failure or
interruption. A mutant is killed when one of its tests fails, survives
when they all pass, and is an error when none ran or its text is not in
the file once. The mutants are written into a git worktree of the work
tree's HEAD (its commits), never into the work tree, which the real
cloud's services run from.

The mutants of the project `tools` remove a guard of this repository's
own checks (the real cloud's verdicts above all): they are written into
a git worktree of this repository's HEAD, and their tests, the tool's own
unit tests, run there with this Python (series.test_ids).
"""

import contextlib
import dataclasses
import json
from pathlib import Path
import subprocess
import sys
import time
import tomllib

from series import config
from series import each
from series import kinds
from series import process
from series import queue
from series import suites

KILLED, SURVIVED, ERROR = 'killed', 'survived', 'error'
# The project name of the mutants of this repository's own code.
TOOLS = 'tools'


@dataclasses.dataclass
class Mutant:
    name: str
    project: str
    file: str
    guard: str
    find: str
    replace: str
    tests: tuple


@dataclasses.dataclass
class Outcome:
    mutant: Mutant
    result: str
    seconds: float = 0.0
    detail: str = ''


def catalogue_path():
    return config.ROOT / 'mutants.toml'


def load(path=None):
    """The catalogue's mutants, in its order."""
    with open(path or catalogue_path(), 'rb') as f:
        entries = tomllib.load(f)['mutant']
    mutants = [Mutant(**dict(entry, tests=tuple(entry['tests'])))
               for entry in entries]
    names = [mutant.name for mutant in mutants]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise config.SeriesError(f'mutants.toml names {repeated} twice')
    return mutants


@dataclasses.dataclass
class ToolTree:
    """This repository's code in a worktree of its HEAD: the project the
    tool mutants mutate.
    """
    tree: Path
    name: str = TOOLS


def run_tool_tests(tree, tests, suite):
    """The tool's own unit tests `tests`, run in `tree` with this Python
    (series.test_ids), importing the series package from `tree`: one
    SuiteResult.
    """
    result = suites.SuiteResult(name=suite)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, '-m', 'series.test_ids',
                           *tests], cwd=tree, capture_output=True, text=True)
    result.seconds = round(time.monotonic() - started, 1)
    try:
        run = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        result.fail(f'no result (exit {proc.returncode}): '
                    f'{(proc.stderr.strip().splitlines() or [""])[-1]}')
        return result
    if not Path(run['imported']).resolve().is_relative_to(tree.resolve()):
        result.fail(f'series imported from {run["imported"]}, not {tree}')
        return result
    result.results = run['results']
    result.count()
    # unittest names a test it could not import by its last part.
    unloaded = [test for test in tests
                if test.rpartition('.')[2] in run['unloaded']]
    if unloaded:
        result.error = f'not imported: {", ".join(unloaded)}'
    return result


def run_tests(project, environment, tests, suite):
    """`tests` alone, as the project's kind runs them (the tool's tests:
    run_tool_tests()): one SuiteResult.
    """
    if project.name == TOOLS:
        return run_tool_tests(project.tree, tests, suite)
    return kinds.of(project).run_ids(project, environment, tests, suite)


def mutate(tree, mutant):
    """Write the mutant into the tree; the file's text before it."""
    path = tree / mutant.file
    if not path.exists():
        raise config.SeriesError(f'{mutant.file} does not exist')
    text = path.read_text()
    count = text.count(mutant.find)
    if count != 1:
        raise config.SeriesError(f'its text is in {mutant.file} {count} '
                                 'times, not once')
    path.write_text(text.replace(mutant.find, mutant.replace))
    return text


def judge(result, tests):
    """KILLED when one of the mutant's `tests` ran and failed, SURVIVED
    when they all passed, ERROR when none ran (a run that fails before
    any test, an import error, a Go package that does not build, is not
    a kill: the test would kill any change); and why.
    """
    failed = [test for test, status in result.results.items()
              if status not in (*suites.PASSED, 'skip', 'missing') and
              is_of(test, tests)]
    if failed:
        return KILLED, ', '.join(failed[:3])
    if result.passed:
        return SURVIVED, f'{result.passed} passed'
    problems = [f'{test} {status}' for test, status
                in result.results.items() if not is_of(test, tests)]
    return ERROR, '; '.join(filter(None, [result.error, *problems[:3]])) or \
        'no test ran'


def is_of(ran, tests):
    """Whether the test id `ran` is one of `tests` or under one of them (a
    class, a module, a Go test's subtest).
    """
    return any(ran == test or
               ran.startswith((test + '.', test + '(', test + '/'))
               for test in tests)


def run_mutant(project, environment, mutant):
    started = time.monotonic()
    try:
        original = mutate(project.tree, mutant)
    except config.SeriesError as problem:
        return Outcome(mutant, ERROR, 0.0, str(problem))
    try:
        result = run_tests(project, environment, mutant.tests,
                           f'mutant-{mutant.name}')
    finally:
        (project.tree / mutant.file).write_text(original)
    verdict, detail = judge(result, mutant.tests)
    return Outcome(mutant, verdict, round(time.monotonic() - started, 1),
                   detail)


def control(project, environment, mutants):
    """Every catalogue test of the project passes on the work tree as it
    is: a problem, or ''.
    """
    tests = sorted({test for mutant in mutants for test in mutant.tests})
    result = run_tests(project, environment, tests, 'mutants-control')
    if result.error or result.failed or not result.passed:
        return (f'{project.name}: the catalogue\'s tests must pass without '
                f'a mutant: {result.passed} passed, {result.failed} failed'
                f'{"; " + result.error if result.error else ""}')
    # A test that skips cannot kill its mutant.
    absent = [test for test in tests if not any(
        is_of(ran, [test]) for ran, status in result.results.items()
        if status != 'skip')]
    if absent:
        return f'{project.name}: no test ran (or it skipped) for {absent}'
    return ''


@contextlib.contextmanager
def worktree(project):
    """The project with its tree a detached git worktree of the work
    tree's HEAD, under .work/mutants/, removed afterwards: the mutants
    never touch the work tree, which the real cloud's services run from.
    """
    path = config.ROOT / '.work' / 'mutants' / project.name
    each.add_worktree(project.tree, path, 'HEAD')
    try:
        yield each.at_commit(project, path)
    finally:
        each.remove_worktree(project.tree, path)


@contextlib.contextmanager
def tool_worktree():
    """ToolTree of a detached git worktree of this repository's HEAD,
    under .work/mutants/, removed afterwards.
    """
    path = config.ROOT / '.work' / 'mutants' / TOOLS
    each.add_worktree(config.ROOT, path, 'HEAD')
    try:
        yield ToolTree(tree=path)
    finally:
        each.remove_worktree(config.ROOT, path)


def print_table(outcomes):
    width = max([6] + [len(o.mutant.name) for o in outcomes])
    process.say('')
    process.say(f'{"mutant":<{width}} {"tests":>5} {"result":>8} '
                f'{"seconds":>8}')
    for o in outcomes:
        process.say(f'{o.mutant.name:<{width}} {len(o.mutant.tests):>5} '
                    f'{o.result:>8} {o.seconds:>8.0f}')
    counts = {r: sum(o.result == r for o in outcomes)
              for r in (KILLED, SURVIVED, ERROR)}
    process.say(f'{counts[KILLED]} killed, {counts[SURVIVED]} survived, '
                f'{counts[ERROR]} errors')
    return counts


def mutants(names=(), project_names=()):
    """Run the catalogue (or the named mutants, or those of the named
    projects); 0 when every mutant is killed.
    """
    counts = print_table(run(names, project_names))
    return 0 if counts[SURVIVED] + counts[ERROR] == 0 else 1


def suite(project_names):
    """The mutants of these projects as a SuiteResult (CI): a killed
    mutant passes, a surviving one or an error fails.
    """
    result = suites.SuiteResult(name=f'mutants of {", ".join(project_names)}')
    started = time.monotonic()
    try:
        outcomes = run((), project_names)
    except config.SeriesError as problem:
        result.fail(str(problem))
        return result
    print_table(outcomes)
    result.passed = sum(o.result == KILLED for o in outcomes)
    result.failed = len(outcomes) - result.passed
    result.error = ', '.join(f'{o.mutant.name} {o.result}' for o in outcomes
                             if o.result != KILLED)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def run(names=(), project_names=()):
    """The outcome of each chosen mutant."""
    catalogue = load()
    chosen = [m for m in catalogue
              if (not names or m.name in names) and
              (not project_names or m.project in project_names)]
    unknown = set(names) - {m.name for m in catalogue}
    if unknown:
        raise config.SeriesError(f'no mutant {sorted(unknown)} in '
                                 'mutants.toml')
    projects = config.load_projects()
    outcomes = []
    for name in dict.fromkeys(m.project for m in chosen):
        own = [m for m in chosen if m.project == name]
        if name == TOOLS:
            environment, copy_of = sys.executable, tool_worktree()
        else:
            project = projects[name]
            queue.ensure_tree(project)
            environment = kinds.of(project).environment(project)
            copy_of = worktree(project)
        with copy_of as copy:
            if name != TOOLS:
                # Its tests must test the copy's code, not the work tree's
                # (a Python project's virtualenv installs the work tree).
                kinds.of(project).prepare_copy(project, environment,
                                               copy.tree, 'mutants')
            problem = control(copy, environment, own)
            if problem:
                raise config.SeriesError(problem)
            for mutant in own:
                outcome = run_mutant(copy, environment, mutant)
                process.say(f'mutant {mutant.name}: {outcome.result} '
                            f'({outcome.detail}) in {outcome.seconds:.0f}s')
                outcomes.append(outcome)
    return outcomes
