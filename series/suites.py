"""What runs and is counted: the project's tests (stestr), flake8, mypy,
this repository's own tests and benchmarks, and the summary table.
"""

import csv as csv_module
import dataclasses
import io
import os
import re
import subprocess
import sys
import time

from series import config
from series import envs
from series import process
from series import queue
from series import selection


@dataclasses.dataclass
class SuiteResult:
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    results: dict = dataclasses.field(default_factory=dict)
    error: str = ''


def read_subunit_results(python, tree):
    """Return {test id: status} for the last stestr run in `tree`."""
    last = subprocess.run([python, '-m', 'stestr', 'last', '--subunit'],
                          cwd=tree, stdout=subprocess.PIPE, check=False)
    csv = subprocess.run([python.parent / 'subunit2csv', '--no-passthrough'],
                         input=last.stdout, stdout=subprocess.PIPE,
                         check=False)
    results = {}
    # Quoted fields: tempest's ids carry tags with commas, test[id-1,smoke].
    rows = list(csv_module.reader(io.StringIO(
        csv.stdout.decode(errors='replace'))))
    for test_id, status, *_ in rows[1:]:
        test_id = re.sub(r'\[.*\]$', '', test_id)
        if status != 'exists':
            results[test_id] = status
    return results


def run_suite(project, python, suite, test_path, filters, concurrency=None):
    """Run stestr on one test path; return a SuiteResult."""
    tree = project.tree
    result = SuiteResult(name=f'{project.name} {suite}')
    env = {'OS_STDOUT_CAPTURE': '1', 'OS_STDERR_CAPTURE': '1',
           'OS_TEST_TIMEOUT': '160', 'PYTHONDONTWRITEBYTECODE': '1',
           'LANGUAGE': 'en_US', 'LC_ALL': 'C.UTF-8',
           'PATH': f'{python.parent}{os.pathsep}{os.environ["PATH"]}',
           'VIRTUAL_ENV': str(python.parent.parent)}
    env.update(project.test_env)
    cmd = [python, '-m', 'stestr', f'--test-path=./{test_path}', 'run',
           '--color']
    if concurrency:
        cmd += ['--concurrency', str(concurrency)]
    if project.known_failures.exists():
        cmd += ['--exclude-list', project.known_failures]
    cmd += filters
    log = config.ROOT / '.work' / 'logs' / f'{project.name}-{suite}.log'
    log.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'{project.name}: {suite} tests: stestr run with '
                f'{len(filters)} filters (log: '
                f'{log.relative_to(config.ROOT)})')
    started = time.monotonic()
    with open(log, 'w') as out:
        proc = subprocess.Popen([str(c) for c in cmd], cwd=tree,
                                env=dict(os.environ, **env),
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            out.write(line)
            if re.match(r'(FAIL|ERROR)[: ]|\{\d+\} .* \.\.\. FAILED', line):
                sys.stdout.write(line)
        proc.wait()
    result.results = read_subunit_results(python, tree)
    for status in result.results.values():
        if status in ('success', 'xfail'):
            result.passed += 1
        elif status == 'skip':
            result.skipped += 1
        else:
            result.failed += 1
    if proc.returncode != 0 and not result.failed:
        result.failed += 1
        result.error = f'stestr exited {proc.returncode}; see {log}'
    process.say(f'{project.name}: {suite}: {result.passed} passed, '
                f'{result.failed} failed, {result.skipped} skipped in '
                f'{time.monotonic() - started:.0f}s')
    for test_id, status in sorted(result.results.items()):
        if status not in ('success', 'xfail'):
            process.say(f'  {status.upper()}: {test_id}')
    return result


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
         databases=False, concurrency=None):
    """Run the selection; return the list of SuiteResults."""
    if not (project.tree / '.git').exists():
        queue.apply(project)
    python = envs.ensure_venv(project)
    tree = project.tree
    if full:
        unit_filters, func_filters = ['.*'], ['.*']
    elif filters:
        unit_filters, func_filters = selection.split_filters(project, tree,
                                                             filters)
    else:
        unit_modules, func_modules = selection.select_tests(
            project, tree, selection.changed_files(tree))
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
                                unit_filters, concurrency))
    if functional and project.functional_tests and func_filters:
        suites.append(run_suite(project, python, 'functional',
                                project.functional_tests, func_filters,
                                concurrency))
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


def lint(project):
    """flake8 (with the project's hacking checks) on the changed files,
    then the project's other style checks (projects.toml lint-commands,
    where {files} stands for the changed Python files).
    """
    if not (project.tree / '.git').exists():
        queue.apply(project)
    python = envs.ensure_venv(project)
    tree = project.tree
    files = [f for f in selection.changed_files(tree)
             if f.endswith('.py') and (tree / f).exists()]
    tools = dict.fromkeys(['flake8'] + [command[0] for command
                                        in project.lint_commands])
    result = SuiteResult(name=f'{project.name} {", ".join(tools)}')
    if not files:
        process.say(f'{project.name}: flake8: the series changes no Python '
                    'file')
        result.passed = 1
        return result
    problems = []
    commands = [['flake8', '{files}'], *project.lint_commands]
    for command in commands:
        argv = [str(python.parent / command[0]), *command[1:]]
        argv = [part for arg in argv
                for part in (files if arg == '{files}' else [arg])]
        shown = ' '.join(command).replace(' {files}', '')
        on = f' on {len(files)} files' if '{files}' in command else ''
        proc = process.run(argv, cwd=tree, check=False)
        if proc.returncode == 0:
            process.say(f'{project.name}: {shown}: clean{on}')
        else:
            problems.append(f'{shown}:\n{proc.stdout.strip()}')
            process.say(f'{project.name}: {shown} found problems:\n'
                        f'{proc.stdout}')
    result.passed = int(not problems)
    result.failed = int(bool(problems))
    result.error = '\n'.join(problems)
    return result


def bench(project, name, args):
    """Run benchmarks/<name>.py with the project's venv in its work tree."""
    script = config.ROOT / 'benchmarks' / f'{name}.py'
    if not script.exists():
        available = sorted(
            p.stem for p in (config.ROOT / 'benchmarks').glob('*.py'))
        raise config.SeriesError(f'no benchmark {name!r}; there are: '
                                 f'{", ".join(available)}')
    if not (project.tree / '.git').exists():
        queue.apply(project)
    python = envs.ensure_venv(project)
    return process.run([python, script, *args], cwd=project.tree,
                       capture=False, env=project.test_env,
                       check=False).returncode


def tool_self_test(directory='series/tests', name='tools/series self-test',
                   top_level='.', python=sys.executable):
    """Run this repository's own unit tests in `directory`.

    `top_level` (unittest's -t, relative to the repository) is where the
    test modules are imported from: the root for the package's tests
    (series.tests.test_*), None for tests that are not in a package.
    """
    top = ['-t', config.ROOT / top_level] if top_level else []
    proc = process.run([python, '-m', 'unittest', 'discover', '-v',
                        '-s', config.ROOT / directory, *top],
                       cwd=config.ROOT, check=False)
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


def typecheck(project):
    """mypy on the files the project's own configuration lists.

    It runs in a small venv of its own, as the project's tox mypy env does.
    """
    result = SuiteResult(name=f'{project.name} mypy')
    if not project.type_check_packages:
        return result
    venv = project.venv.with_name(f'{project.name}-mypy')
    python = venv / 'bin' / 'python'
    if not python.exists():
        process.run([sys.executable, '-m', 'venv', venv])
        constraints_file = venv / 'upper-constraints.txt'
        constraints_file.write_text(envs.constraints_for(project))
        process.run([python, '-m', 'pip', 'install', '--quiet', '--no-input',
                     '-c', constraints_file, *project.type_check_packages])
    proc = process.run([python, '-m', 'mypy', '--cache-dir',
                        config.ROOT / '.work' / 'mypy-cache' / project.name],
                       cwd=queue.require_tree(project), check=False)
    result.passed = int(proc.returncode == 0)
    result.failed = int(proc.returncode != 0)
    result.error = proc.stdout.strip()
    process.say(f'{project.name}: mypy: '
                f'{proc.stdout.strip().splitlines()[-1]}')
    return result


def lint_tools(project):
    """flake8 on this repository's own Python, with the project's venv."""
    python = envs.ensure_venv(project)
    paths = ['tools/series', 'series', 'benchmarks', 'contract',
             'demo', 'devstack/tests', 'specs', 'doc']
    proc = process.run([python, '-m', 'flake8', *paths], cwd=config.ROOT,
                       check=False)
    result = SuiteResult(name='tools flake8', passed=int(proc.returncode == 0),
                         failed=int(proc.returncode != 0),
                         error=proc.stdout.strip())
    process.say('tools flake8: ' +
                ('clean' if not result.failed else proc.stdout))
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
    """The last line, "N passed, N failed"; 1 if any failed."""
    passed = sum(s.passed for s in suites)
    failed = sum(s.failed for s in suites)
    process.say(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


def print_summary(suites, started):
    print_table(suites)
    process.say(f'(total time {(time.monotonic() - started) / 60:.1f} min)')
    return print_totals(suites)
