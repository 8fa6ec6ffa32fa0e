"""A Go project's tests and static checks: `go test -json` of the
packages its series touches, judged test by test as a stestr run is
(suites.judge: a skip is not a pass, no test run fails), `go vet` of
those packages and `gofmt -l` of the Go files it changes.

A package's tests are the package's own and, where the project keeps
them beside it (gophercloud's `<package>/testing`), those of its
`testing` directory.
"""

import json
from pathlib import Path
import re
import tempfile
import time

from series import config
from series import go_module
from series import process
from series import queue
from series import selection
from series import suites

# `go test -timeout`: a hung test fails its package instead of CI.
TIMEOUT = '10m'


def packages(tree, files):
    """The packages (./dir) of the Go files among `files` (paths relative
    to `tree`), each with its `testing` directory where it has one.
    """
    found = []
    for name in files:
        if not name.endswith('.go') or not (tree / name).exists():
            continue
        directory = Path(name).parent
        for candidate in (directory, directory / 'testing'):
            if (any((tree / candidate).glob('*.go')) and
                    candidate not in found):
                found.append(candidate)
    return [f'./{directory}' if str(directory) != '.' else '.'
            for directory in found]


def series_packages(tree):
    """The packages (./dir) of the Go files the series of the work tree
    `tree` changes.
    """
    return packages(tree, selection.changed_files(tree))


def workspace(project, tree):
    """`tree`, with a Go workspace (its go.work) that uses it and the work
    trees of the project's series requirements, applied where missing:
    the go command then builds the tree against the patched modules,
    and go.mod keeps the releases it requires. Without series
    requirements, no workspace. go.work is ignored by git in every work
    tree (queue.WORK_TREE_EXCLUDES): it is never part of a patch.
    """
    if not project.series_requirements:
        return tree
    required = [queue.ensure_tree(config.get_project(name))
                for name in project.series_requirements]
    write_workspace(tree / 'go.work', tree, ['.', *required])
    return tree


def write_workspace(path, tree, directories):
    """Write the Go workspace `path` that uses `directories`, at the go
    version of the module in `tree`.
    """
    version = re.search(r'^go (\S+)$', (tree / 'go.mod').read_text(), re.M)
    if not version:
        raise config.SeriesError(f'{tree / "go.mod"} names no go version')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '// Written by tools/series: modules built against the work trees '
        'of the\n// series they require.\n'
        f'go {version.group(1)}\n\nuse (\n' +
        ''.join(f'\t{directory}\n' for directory in directories) + ')\n')


def import_path(project, directory):
    """The import path of a package directory (./dir) of the module."""
    return (project.module if directory == '.'
            else f'{project.module}/{directory.removeprefix("./")}')


def with_tests(project, tree, package_paths):
    """The packages among `package_paths` that have tests `go test` runs
    without build tags (gophercloud's acceptance tests need one), or that
    do not build (their run fails).
    """
    ids, failed = listing(tree, package_paths)
    keep = {test_id.rpartition('.')[0] for test_id in ids} | set(failed)
    return [directory for directory in package_paths
            if import_path(project, directory) in keep]


def events(output):
    """The events of `go test -json` output (lines that are not JSON,
    such as a build error printed before them, left out).
    """
    found = []
    for line in output.splitlines():
        if line.startswith('{'):
            try:
                found.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return found


def results_of(stream):
    """({test id: status}, {test id: skip reason}) of a run's events:
    each top-level test as `<package>.<Test>` with 'success', 'fail' or
    'skip'; a package that failed without a test failing (it did not
    build, or its TestMain failed) as `<package>` 'fail'.
    """
    results, output = {}, {}
    failed_packages = []
    for event in stream:
        package, test = event.get('Package', ''), event.get('Test')
        action = event.get('Action')
        if test and '/' in test:
            continue
        if test is None:
            if action == 'fail':
                failed_packages.append(package)
            continue
        test_id = f'{package}.{test}'
        if action == 'output':
            output.setdefault(test_id, []).append(event.get('Output', ''))
        elif action in ('pass', 'fail', 'skip'):
            results[test_id] = {'pass': 'success'}.get(action, action)
    for package in failed_packages:
        if not any(test_id.startswith(f'{package}.') and status == 'fail'
                   for test_id, status in results.items()):
            results[package] = 'fail'
    skips = {test_id: skip_reason(output.get(test_id, []))
             for test_id, status in results.items() if status == 'skip'}
    return results, skips


def skip_reason(lines):
    """What a skipped test printed, without go test's own lines."""
    return ' '.join(line.strip() for line in lines
                    if line.strip() and not line.lstrip().startswith(
                        ('=== ', '--- '))).strip()


def listed(tree, package_paths, pattern='.', tags=()):
    """The test ids `go test -list` gives for the packages (the tests
    matching `pattern`, built with `tags`).
    """
    return listing(tree, package_paths, pattern, tags)[0]


def listing(tree, package_paths, pattern='.', tags=()):
    """`go test -list` of the packages: (the test ids, the packages whose
    listing failed: they did not build).
    """
    proc = go_module.go('test', '-json', '-list', pattern, *tag_options(tags),
                        *package_paths, cwd=tree, check=False)
    ids, failed = [], []
    for event in events(proc.stdout):
        name = event.get('Output', '').strip()
        if event.get('Action') == 'fail' and not event.get('Test'):
            failed.append(event.get('Package'))
        elif (event.get('Action') == 'output' and name.startswith(
                ('Test', 'Example', 'Fuzz')) and ' ' not in name):
            ids.append(f'{event["Package"]}.{name}')
    return ids, failed


def run(project, package_paths, name, background=False):
    """`go test -json` of the packages in the work tree; a SuiteResult,
    judged against what `go test -list` selects.
    """
    tree = project.tree
    result = suites.SuiteResult(name=f'{project.name} {name}')
    started = time.monotonic()
    selected = listed(tree, package_paths)
    command = ['go', 'test', '-json', '-count=1', f'-timeout={TIMEOUT}',
               *package_paths]
    log = config.ROOT / '.work' / 'logs' / f'{project.name}-{name}.log'
    log.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'{project.name}: {name}: go test of '
                f'{len(package_paths)} packages (log: '
                f'{log.relative_to(config.ROOT)})')
    proc = process.run(process.background(command) if background
                       else command, cwd=tree,
                       env=go_module.environment(), check=False)
    log.write_text(proc.stdout)
    results, skips = results_of(events(proc.stdout))
    suites.judge(result, proc.returncode, results, selected)
    result.skips = skips
    if result.failed:
        result.error = '; '.join(filter(None, [result.error, f'see {log}']))
    result.seconds = round(time.monotonic() - started, 1)
    return result


def tag_options(tags):
    return [f'-tags={",".join(tags)}'] if tags else []


def run_matching(project, package, pattern, name, tags, env, log,
                 timeout):
    """`go test -run pattern` of one package in the work tree, built with
    `tags`, in `env` (added to the Go environment), output in `log`; a
    SuiteResult judged against what `go test -list pattern` selects (one
    selected and not run fails, as one skipped does not pass).
    """
    result = suites.SuiteResult(name=name)
    started = time.monotonic()
    selected = listed(project.tree, [package], pattern, tags)
    proc = process.run(
        ['go', 'test', '-json', '-count=1', f'-timeout={timeout}',
         *tag_options(tags), f'-run={pattern}', package],
        cwd=project.tree, env=dict(go_module.environment(), **env),
        check=False)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(proc.stdout)
    results, skips = results_of(events(proc.stdout))
    suites.judge(result, proc.returncode, results, selected)
    result.skips = skips
    if result.failed:
        result.error = '; '.join(filter(None, [result.error, f'see {log}']))
    result.seconds = round(time.monotonic() - started, 1)
    return result


def run_ids(project, test_ids, name):
    """The tests `test_ids` (`<package>.<Test>`) alone, a `go test -run`
    of each package in the work tree; one SuiteResult judged against
    the ids asked for (one not run is missing).
    """
    total = suites.SuiteResult(name=f'{project.name} {name}')
    started = time.monotonic()
    by_package = {}
    for test_id in test_ids:
        package, _, test = test_id.rpartition('.')
        by_package.setdefault(package, []).append(test)
    results, returncode = {}, 0
    for package, tests in by_package.items():
        proc = go_module.go('test', '-json', '-count=1',
                            f'-timeout={TIMEOUT}',
                            f'-run=^({"|".join(sorted(tests))})$', package,
                            cwd=project.tree, check=False)
        ran, _ = results_of(events(proc.stdout))
        results.update(ran)
        returncode = returncode or proc.returncode
    suites.judge(total, returncode, results, list(test_ids))
    total.seconds = round(time.monotonic() - started, 1)
    return total


# Ginkgo's states of a spec, as test statuses: a pending spec is one that
# does not run.
GINKGO_STATES = {'passed': 'success', 'skipped': 'skip', 'pending': 'skip'}


def spec_name(spec):
    """A spec of a Ginkgo JSON report as "<containers> <spec>"."""
    return ' '.join([*(spec.get('ContainerHierarchyTexts') or []),
                     spec.get('LeafNodeText', '')])


def ginkgo_specs(project, package, required):
    """The Ginkgo specs a Go test of `package` runs in process (csi-sanity
    run by cinder-csi's tests/sanity), each as Ginkgo's JSON report gives
    it: a SuiteResult with a result per spec ("<containers> <spec>"), a
    skipped or pending spec with why. It fails on a failed spec, and
    unless each spec of `required` ran and passed.
    """
    result = suites.SuiteResult(name=f'{project.name} specs of {package}')
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        report = Path(directory) / 'ginkgo.json'
        proc = go_module.go('test', '-count=1', f'-timeout={TIMEOUT}',
                            package, '-args', f'-ginkgo.json-report={report}',
                            '-ginkgo.no-color', cwd=project.tree, check=False)
        specs = json.loads(report.read_text()) if report.exists() else []
    for suite in specs:
        for spec in suite.get('SpecReports') or []:
            name = spec_name(spec)
            status = GINKGO_STATES.get(spec.get('State'), 'fail')
            result.results[name] = status
            if status == 'skip':
                result.skips[name] = ((spec.get('Failure') or {}).get(
                    'Message') or spec.get('State'))
    result.count()
    not_passed = [spec for spec in required
                  if result.results.get(spec) != 'success']
    if not result.results:
        result.fail(f'no spec reported (go test exited {proc.returncode}): '
                    f'{proc.stdout.strip()[-500:]}')
    elif not_passed:
        result.fail('did not run and pass: ' + '; '.join(
            f'{spec} ({result.results.get(spec, "absent")})'
            for spec in not_passed))
    elif proc.returncode and not result.failed:
        result.fail(f'go test exited {proc.returncode} with no spec failed')
    process.say(f'{project.name}: {package}: {result.passed} specs passed, '
                f'{result.failed} failed, {result.skipped} skipped')
    result.seconds = round(time.monotonic() - started, 1)
    return result


def test(project, background=False):
    """The tests of the packages the series touches, then the Ginkgo specs
    of the project's `ginkgo-suites`; [SuiteResult].
    """
    workspace(project, queue.ensure_tree(project))
    package_paths = series_packages(project.tree)
    process.say(f'{project.name}: selection derived from the series: '
                f'{len(package_paths)} packages')
    for package in package_paths:
        process.say(f'  {package}')
    if not package_paths:
        result = suites.SuiteResult(name=f'{project.name} unit')
        result.fail('the series changes no Go package')
        return [result]
    return [run(project, package_paths, 'unit', background),
            *(ginkgo_specs(project, package, required)
              for package, required in project.ginkgo_suites.items())]


def lint(project):
    """`gofmt -l` of the Go files the series changes and `go vet` of
    their packages; a SuiteResult with one entry per check.
    """
    tree = workspace(project, queue.ensure_tree(project))
    changed = [name for name in selection.changed_files(tree)
               if name.endswith('.go') and (tree / name).exists()]
    return lint_files(project, tree, changed)


def lint_files(project, tree, changed):
    """`gofmt -l -s` of the Go files `changed` in `tree` and `go vet` of
    their packages; a SuiteResult with one entry per check.
    """
    result = suites.SuiteResult(name=f'{project.name} gofmt, go vet')
    checks = {}
    if changed:
        unformatted = process.run(['gofmt', '-l', '-s', *changed], cwd=tree,
                                  check=False)
        checks['gofmt'] = (unformatted.returncode == 0 and
                           not unformatted.stdout.strip(),
                           unformatted.stdout.strip())
        vet = go_module.go('vet', *tag_options(project.build_tags),
                           *packages(tree, changed), cwd=tree, check=False)
        checks['go vet'] = (vet.returncode == 0, vet.stdout.strip())
    for check, (ok, output) in checks.items():
        process.say(f'{project.name}: {check}: '
                    f'{"clean" if ok else "FAILED"} on {len(changed)} '
                    f'changed files{"" if ok else ":"}')
        if not ok:
            process.say(output)
    result.results = {check: 'success' if ok else 'fail'
                      for check, (ok, _) in checks.items()}
    result.count()
    problems = [f'{check}: {output}' for check, (ok, output)
                in checks.items() if not ok]
    if not checks:
        result.fail('the series changes no Go file')
    elif problems:
        result.error = '; '.join(problems)
    return result
