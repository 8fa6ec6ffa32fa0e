"""What runs and is counted (SuiteResult): the project's tests (stestr)
and what a run reports, this repository's own tests and benchmarks, and
the summary table. The static checks, counted alike, are in linters.
"""

import csv as csv_module
import dataclasses
import io
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import time

from series import config
from series import process
from series import queue
from series import selection
from series import virtualenvs


PASSED = ('success', 'xfail')
SKIP = re.compile(r'^\{\d+\} (.+?) \.\.\. SKIPPED: (.*)$')
CLASS_FIXTURE = re.compile(r'^setUpClass \((.+)\)$')


@dataclasses.dataclass
class SuiteResult:
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    # {test id: status}, stestr's (subunit's) statuses, 'missing' for a
    # test selected but absent from the run.
    results: dict = dataclasses.field(default_factory=dict)
    error: str = ''
    # {test id: reason} of the skipped tests (and classes).
    skips: dict = dataclasses.field(default_factory=dict)
    seconds: float = 0.0

    def count(self):
        """passed, failed and skipped from `results`; a test that did
        not pass nor skip counts as failed.
        """
        statuses = list(self.results.values())
        self.passed = sum(status in PASSED for status in statuses)
        self.skipped = statuses.count('skip')
        self.failed = len(statuses) - self.passed - self.skipped

    def fail(self, problem):
        """Fail the result for `problem`, which joins its error: failed
        is at least 1.
        """
        if not self.failed:
            self.failed = 1
        self.error = '; '.join(filter(None, [self.error, problem]))

    def failures(self):
        """The tests that neither passed nor skipped, then the error."""
        return [test for test, status in sorted(self.results.items())
                if status not in PASSED and status != 'skip'] + (
                    [self.error] if self.error else [])

    def report(self):
        """What report.json keeps of a run: the counts, each test with its
        status, the failures, the skips with their reasons, the seconds.
        """
        return {'passed': self.passed, 'failed': self.failed,
                'skipped': self.skipped, 'failures': self.failures(),
                'skips': {test: self.skips.get(test, '') for test, status
                          in sorted(self.results.items())
                          if status == 'skip'},
                'tests': dict(sorted(self.results.items())),
                'error': self.error, 'seconds': self.seconds}


def skipped(line):
    """(test id, reason) from a line of stestr's output, or None: the id
    without its tags or time, as subunit reports it.
    """
    found = SKIP.match(line.strip())
    if not found:
        return None
    test = re.sub(r'\s*\[[\d.]+s\]$', '', found.group(1))
    return re.sub(r'\[[^\]]*\]$', '', test), found.group(2).strip()


def test_id(listed):
    """A test id without its tags (tempest's test[id-1,smoke])."""
    return re.sub(r'\[.*\]$', '', listed)


def next_run_id(repository):
    """The id stestr gives the next run recorded in the stestr repository
    of `repository` (its file repository's counter; 0 for a new one).
    """
    counter = Path(repository) / '.stestr' / 'next-stream'
    return int(counter.read_text()) if counter.exists() else 0


def read_subunit_results(python, repository, run_id):
    """Return {test id: status} of the run `run_id` of the stestr
    repository in `repository`; None if it holds no such run.
    """
    stream = subprocess.run(
        [python, '-m', 'stestr', '--repo-url', Path(repository).resolve(),
         'history', 'show', str(run_id), '--subunit'],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    if stream.returncode != 0:
        return None
    csv = subprocess.run([Path(python).parent / 'subunit2csv',
                          '--no-passthrough'],
                         input=stream.stdout, stdout=subprocess.PIPE,
                         check=False)
    results = {}
    # Quoted fields: tempest's ids carry tags with commas, test[id-1,smoke].
    rows = list(csv_module.reader(io.StringIO(
        csv.stdout.decode(errors='replace'))))
    for test, status, *_ in rows[1:]:
        if status != 'exists':
            results[test_id(test)] = status
    return results


def with_listed(result, results, listed):
    """Set `result`'s results: `results` with every test of `listed` (the
    ids stestr selected). A test of a class skipped as a whole is skipped
    with the class's reason, in place of the class's setUpClass; any other
    test the run does not hold is 'missing'.
    """
    classes = {found.group(1): test for test in results
               for found in [CLASS_FIXTURE.match(test)]
               if found and results[test] == 'skip'}
    result.results = dict(results)
    for test in listed:
        if test in results:
            continue
        fixture = classes.get(test.rpartition('.')[0])
        if fixture:
            result.results[test] = 'skip'
            result.skips[test] = result.skips.get(fixture, '')
        else:
            result.results[test] = 'missing'
    for fixture in set(classes.values()):
        if any(test.startswith(CLASS_FIXTURE.match(fixture).group(1) + '.')
               for test in listed):
            del result.results[fixture]
            result.skips.pop(fixture, None)


def judge(result, returncode, results, listed=None):
    """Fill `result` from one stestr run: its exit status, the results
    it recorded (None: it recorded no run) and, if given, the ids it
    selected. Fails it when the run recorded nothing, holds no test,
    lacks a selected test or exited non-zero without a failed test.
    """
    if results is None:
        result.results = {}
        result.count()
        result.fail(f'stestr recorded no run (exit status {returncode})')
        return result
    if listed is None:
        result.results = results
    else:
        with_listed(result, results, listed)
    result.count()
    missing = [test for test, status in result.results.items()
               if status == 'missing']
    if not result.results:
        result.fail(f'no test ran (stestr exit status {returncode})')
    elif missing:
        result.fail(f'{len(missing)} selected tests not in the run')
    elif returncode != 0 and not result.failed:
        result.fail(f'stestr exited {returncode} with no test failed')
    return result


def not_passed(result, prefixes):
    """What keeps the tests named by `prefixes` (test id prefixes, a
    class's for instance) from having passed: none in the run, or one
    that did not pass (a skip included).
    """
    problems = []
    for prefix in prefixes:
        tests = {test: status for test, status in result.results.items()
                 if test.startswith(prefix)}
        if not tests:
            problems.append(f'no test {prefix}* ran')
        problems += [f'{test} {status}' for test, status
                     in sorted(tests.items()) if status not in PASSED]
    return problems


def run_stestr(python, tree, filters, *, name, log, env, options=(),
               selection=(), run_options=(), repository=None, listed=False,
               echo=None, background=False):
    """Run `stestr run` in `tree` and return a SuiteResult of that run
    alone (judge()).

    `options` are stestr's own (before the command), `selection` the
    options that choose tests, `run_options` the others of `run`.
    `repository` is a new stestr repository for this run (the directory
    is emptied first); without it, the tree's own, whose run is read by
    the id it got, never as the last. With `listed`, `stestr list`
    first gives the ids the run must hold. Each line of output goes to
    `log`, and to `echo` if given. With `background`, the run takes
    only the CPU that other sessions leave (process.background()).
    """
    stestr = [str(python), '-m', 'stestr', '--repo-url',
              str(repository or tree), *map(str, options)]
    if repository:
        shutil.rmtree(repository, ignore_errors=True)
        Path(repository).mkdir(parents=True)
        subprocess.run([*stestr, 'init'], cwd=tree, env=env,
                       stdout=subprocess.DEVNULL, check=True)
    repository = Path(repository or tree)
    selection = [*map(str, selection), *filters]
    result = SuiteResult(name=name)
    started = time.monotonic()
    selected = None
    if listed:
        listing = subprocess.run([*stestr, 'list', *selection], cwd=tree,
                                 env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True,
                                 check=False)
        if listing.returncode != 0:
            Path(log).write_text(listing.stdout)
            result.seconds = round(time.monotonic() - started, 1)
            result.fail(f'stestr list exited {listing.returncode}: '
                        f'{(listing.stdout.strip().splitlines() or [""])[-1]}')
            return result
        selected = [test_id(line.strip())
                    for line in listing.stdout.splitlines() if line.strip()]
    run_id = next_run_id(repository)
    command = [*stestr, 'run', *map(str, run_options), *selection]
    if background:
        command = process.background(command)
    with open(log, 'w') as out, subprocess.Popen(
            command, cwd=tree, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True,
            start_new_session=background) as proc:
        for line in proc.stdout:
            out.write(line)
            skip = skipped(line)
            if skip:
                result.skips[skip[0]] = skip[1]
            if echo:
                echo(line)
    result.seconds = round(time.monotonic() - started, 1)
    return judge(result, proc.returncode,
                 read_subunit_results(python, repository, run_id), selected)


# Each test's time limit (OS_TEST_TIMEOUT), as the projects' tox.ini set
# it; in the background, where a test may wait minutes for the CPU, a
# guard against hangs only.
TEST_TIMEOUT = 160
BACKGROUND_TEST_TIMEOUT = 900


def run_suite(project, python, suite, test_path, filters, concurrency=None,
              background=False):
    """Run stestr on one test path; return a SuiteResult. With
    `background` (run_stestr()), each test's time limit is
    BACKGROUND_TEST_TIMEOUT.
    """
    timeout = BACKGROUND_TEST_TIMEOUT if background else TEST_TIMEOUT
    env = {'OS_STDOUT_CAPTURE': '1', 'OS_STDERR_CAPTURE': '1',
           'OS_TEST_TIMEOUT': str(timeout), 'PYTHONDONTWRITEBYTECODE': '1',
           'LANGUAGE': 'en_US', 'LC_ALL': 'C.UTF-8',
           'PATH': f'{python.parent}{os.pathsep}{os.environ["PATH"]}',
           'VIRTUAL_ENV': str(python.parent.parent)}
    env.update(project.test_env)
    run_options = ['--color']
    if concurrency:
        run_options += ['--concurrency', str(concurrency)]
    selection = []
    if project.known_failures.exists():
        selection += ['--exclude-list', project.known_failures]
    log = config.ROOT / '.work' / 'logs' / f'{project.name}-{suite}.log'
    log.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'{project.name}: {suite} tests: stestr run with '
                f'{len(filters)} filters (log: '
                f'{log.relative_to(config.ROOT)})')

    def echo(line):
        if re.match(r'(FAIL|ERROR)[: ]|\{\d+\} .* \.\.\. FAILED', line):
            sys.stdout.write(line)

    result = run_stestr(python, project.tree, filters,
                        name=f'{project.name} {suite}', log=log,
                        env=dict(os.environ, **env),
                        options=[f'--test-path=./{test_path}'],
                        selection=selection, run_options=run_options,
                        echo=echo, background=background)
    if result.error:
        result.error += f'; see {log}'
    process.say(f'{project.name}: {suite}: {result.passed} passed, '
                f'{result.failed} failed, {result.skipped} skipped in '
                f'{result.seconds:.0f}s')
    for test, status in sorted(result.results.items()):
        if status not in PASSED:
            process.say(f'  {status.upper()}: {test}')
    if result.error:
        process.say(f'  {result.error}')
    return result


def require_each_selected(result, filters):
    """Fail `result` for each entry of the derived selection that ran no
    test: a selected module, class or test method must run.
    """
    ran = list(result.results)
    idle = [f for f in filters if not any(re.match(f, t) for t in ran)]
    if idle:
        result.fail(f'{len(idle)} selected entries ran no test: '
                    f'{", ".join(idle[:5])}')


def check_database_tests(project, results):
    """With --databases: the MySQL/PostgreSQL tests ran and passed."""
    pattern = re.compile(project.database_tests)
    matching = {t: s for t, s in results.items() if pattern.search(t)}
    ran = [t for t, s in matching.items() if s == 'success']
    other = [f'{t} ({s})' for t, s in matching.items() if s != 'success']
    process.say(f'{project.name}: real-database tests '
                f'({project.database_tests}): {len(ran)} passed, '
                f'{len(other)} not passed')
    problems = [f'database test did not pass: {t}' for t in other]
    if not ran:
        problems.append(f'no test matching {project.database_tests} ran')
    return problems


def test(project, filters=(), full=False, unit=True, functional=True,
         databases=False, concurrency=None, background=False,
         wide=True):
    """Run the selection; return the list of SuiteResults (`background`:
    run_suite(), `wide`: selection.select_tests()).
    """
    queue.ensure_tree(project)
    python = virtualenvs.ensure_venv(project)
    tree = project.tree
    if full:
        unit_filters, func_filters = ['.*'], ['.*']
    elif filters:
        unit_filters, func_filters = selection.split_filters(project, tree,
                                                             filters)
    else:
        unit_modules, func_modules = selection.select_tests(
            project, tree, selection.changed_files(tree), wide)
        process.say(f'{project.name}: selection derived from the series: '
                    f'{len(unit_modules)} unit and {len(func_modules)} '
                    'functional test modules')
        for module in unit_modules + func_modules:
            process.say(f'  {module}')
        unit_filters = selection.regex_for_modules(unit_modules)
        func_filters = selection.regex_for_modules(func_modules)
    suites = []
    if unit and project.unit_tests and unit_filters:
        suites.append(run_suite(project, python, 'unit', project.unit_tests,
                                unit_filters, concurrency, background))
        if not filters and not full:
            require_each_selected(suites[-1], unit_filters)
    if functional and project.functional_tests and func_filters:
        suites.append(run_suite(project, python, 'functional',
                                project.functional_tests, func_filters,
                                concurrency, background))
        if not filters and not full:
            require_each_selected(suites[-1], func_filters)
    if databases and project.database_tests:
        results = {}
        for suite in suites:
            results.update(suite.results)
        problems = check_database_tests(project, results)
        suites.append(SuiteResult(name=f'{project.name} real databases',
                                  passed=0 if problems else 1,
                                  failed=1 if problems else 0,
                                  error='; '.join(problems)))
    return suites


def bench(project, name, args):
    """Run benchmarks/<name>.py with the project's venv in its work tree."""
    script = config.ROOT / 'benchmarks' / f'{name}.py'
    if not script.exists():
        available = sorted(
            p.stem for p in (config.ROOT / 'benchmarks').glob('*.py'))
        raise config.SeriesError(f'no benchmark {name!r}; there are: '
                                 f'{", ".join(available)}')
    queue.ensure_tree(project)
    python = virtualenvs.ensure_venv(project)
    return process.run([python, script, *args], cwd=project.tree,
                       capture=False, env=project.test_env,
                       check=False).returncode


def tool_self_test(directory='series/tests', name='tools/series self-test',
                   top_level='.', python=sys.executable, tests=()):
    """Run this repository's own unit tests in `directory`, or the
    `tests` named (modules, classes) alone.

    `top_level` (unittest's -t, relative to the repository) is where the
    test modules are imported from: the root for the package's tests
    (series.tests.test_*), None for tests that are not in a package.
    """
    top = ['-t', config.ROOT / top_level] if top_level else []
    if tests:
        command = [python, '-m', 'unittest', '-v', *tests]
    else:
        command = [python, '-m', 'unittest', 'discover', '-v',
                   '-s', config.ROOT / directory, *top]
    proc = process.run(command, cwd=config.ROOT, check=False)
    result = SuiteResult(name=name)
    # unittest's own totals: a test that prints does not break them, as it
    # breaks the "... ok" lines.
    ran = re.findall(r'^Ran (\d+) tests? in ', proc.stdout, re.M)
    verdict = re.findall(r'^(?:OK|FAILED)(?: \((.*)\))?$', proc.stdout,
                         re.M)
    if ran and verdict:
        counts = {key.strip(): int(value) for key, value in re.findall(
            r'([a-z ]+)=(\d+)', verdict[-1])}
        result.failed = (counts.get('failures', 0) + counts.get('errors', 0)
                         + counts.get('unexpected successes', 0))
        result.skipped = counts.get('skipped', 0)
        result.passed = int(ran[-1]) - result.failed - result.skipped
    if proc.returncode != 0 and not result.failed:
        result.failed = 1
    if result.failed:
        process.say(proc.stdout)
    process.say(f'{name}: {result.passed} passed, {result.failed} failed, '
                f'{result.skipped} skipped')
    return result


def print_table(suites):
    """What ran: passed, failed and skipped per suite."""
    width = max([32] + [len(suite.name) for suite in suites])
    process.say('')
    process.say(f'{"what ran":<{width}} {"passed":>8} {"failed":>8} '
                f'{"skipped":>8}')
    for suite in suites:
        process.say(f'{suite.name:<{width}} {suite.passed:>8} '
                    f'{suite.failed:>8} {suite.skipped:>8}')


def print_totals(suites):
    """The suites that failed, with their failed tests or error, then
    the last line, "N passed, N failed"; 1 if any failed. The end of a
    long log says what failed without the table above it.
    """
    for suite in suites:
        if suite.failed:
            failed_ids = [test for test, status in suite.results.items()
                          if status not in PASSED and status != 'skip']
            process.say(f'FAILED {suite.name}: '
                        f'{", ".join(failed_ids[:5]) or suite.error}')
    passed = sum(s.passed for s in suites)
    failed = sum(s.failed for s in suites)
    process.say(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


def print_summary(suites, started):
    print_table(suites)
    process.say(f'(total time {(time.monotonic() - started) / 60:.1f} min)')
    return print_totals(suites)
