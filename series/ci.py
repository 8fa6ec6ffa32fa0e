"""`tools/series ci`: everything CI runs, in one summary."""

import concurrent.futures
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from series import checks
from series import cinder_csi_node
from series.cloud import deploy
from series.cloud import scenario
from series.cloud import service_venv
from series.cloud import upgrade
from series import config
from series import contract
from series import demo
from series import each
from series import go_tests
from series import kinds
from series import linters
from series import manual
from series import mutants
from series import patched_docs
from series import process
from series import queue
from series import released_requirement
from series import spec
from series import suites
from series import virtualenvs


# The projects whose mutants CI runs (mutants.toml).
CI_MUTANT_PROJECTS = (mutants.TOOLS, 'os-traits', 'openstacksdk',
                      'python-openstackclient', 'cinder', 'gophercloud',
                      'cloud-provider-openstack')
# The projects whose every commit CI runs alone (`tools/series each`):
# all but Nova, whose commits take a stestr run of their modules each.
CI_EACH_PROJECTS = ('os-traits', 'openstacksdk', 'python-openstackclient',
                    'tempest', 'cinder', 'gophercloud',
                    'cloud-provider-openstack')
# The tool tests that skip without a virtualenv or work tree of this
# checkout.
VIRTUALENV_TOOL_TESTS = ('series.tests.test_suites.RunStestrTest',
                         'series.tests.test_each',
                         'series.tests.test_mutants.RunMutantTest',
                         'series.tests.test_tempest.ReadJobTest',
                         'series.tests.test_macvtap_agent',
                         # It needs the gophercloud work tree.
                         'series.tests.test_gophercloud_step.ProgramTest')


def virtualenv_tool_tests():
    """VIRTUALENV_TOOL_TESTS, run once the projects' virtualenvs and work
    trees exist: a skip among them fails.
    """
    result = suites.tool_self_test(name='tools/series self-test with stestr',
                                   tests=VIRTUALENV_TOOL_TESTS)
    if result.skipped:
        result.fail(f'{result.skipped} skipped with the virtualenvs built')
    return result


def check_result(project, quilt=False):
    problems = checks.check(project, quilt)
    result = suites.SuiteResult(name=f'{project.name} series check',
                                passed=0 if problems else 1,
                                failed=1 if problems else 0,
                                error='\n'.join(problems))
    process.say(f'{project.name}: series check: ' +
                ('clean' if not problems else '\n  ' + '\n  '.join(problems)))
    return result


# A real pair of releases on the package index to prove `rebase` on: the
# Cinder series moved from 29.0.0 to 29.0.0.0rc2 (no 29.0.x point release
# exists yet; a release candidate is another sdist of the same tree).
REBASE_PROOF = ('cinder', '29.0.0.0rc2')


def standalone_commands(projects):
    """(arguments, texts the output must hold) run in a standalone clone."""
    name, version = REBASE_PROOF
    return [(['status'], [f'{project}: base ' for project in projects]),
            (['rebase', name, version],
             [f'the series now applies to {version}']),
            (['status', name], [f'base {name} {version} '])]


def standalone_clone(projects):
    """Clone this repository alone into an empty directory and run there
    `tools/series status` and a rebase of a series onto another release:
    a user who clones it needs nothing beside it. (The demo needs no
    clone of its own: CI runs in a clean clone, and its `demo end to end`
    runs `tools/series demo` there.)
    """
    logs = config.ROOT / '.work' / 'logs'
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / 'standalone-clone.log'
    env = {name: value for name, value in os.environ.items()
           if not name.startswith('SERIES_')}
    passed, problems = 0, []
    with tempfile.TemporaryDirectory(prefix='series-clone-') as tmp:
        clone = Path(tmp) / 'repository'
        process.run(['git', 'clone', '--quiet', config.ROOT, clone])
        process.say(f'standalone clone: {clone} (nothing beside it; log: '
                    f'{log.relative_to(config.ROOT)})')
        with open(log, 'w') as out:
            for command, expected in standalone_commands(projects):
                shown = f'tools/series {" ".join(command)}'
                proc = subprocess.run(
                    [sys.executable, str(clone / 'tools' / 'series'),
                     *command], cwd=clone, env=env, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                out.write(f'$ {shown}\n{proc.stdout}\n')
                missing = [text for text in expected
                           if text not in proc.stdout]
                if proc.returncode == 0 and not missing:
                    passed += 1
                    process.say(f'  {shown}: ok')
                else:
                    problems.append(f'{shown} failed in a standalone clone '
                                    f'(exit {proc.returncode}; expected '
                                    f'{missing} in its output)')
                    process.say(f'  {shown}: FAILED\n' +
                                '\n'.join(proc.stdout.splitlines()[-15:]))
    return suites.SuiteResult(name='standalone clone', passed=passed,
                              failed=len(problems), error='; '.join(problems))


def real_cloud():
    """`cloud upgrade` (a new cloud of the pristine releases, upgraded
    to the series, rolled back, then on the series again), `cloud
    scenario` on the cloud it leaves (on a new one if it left none), and
    `cloud down`: the upgrade's phases, the scenario's steps and the
    tempest and client functional tests it ran, as results. Whatever goes
    wrong, down runs and CI goes on to its summary with the failure in
    it.
    """
    started = time.monotonic()

    def attempt(name, action, errors):
        try:
            return action()
        except Exception as failure:  # reported in the summary, not raised
            if not isinstance(failure, config.SeriesError):
                process.say(traceback.format_exc())
            errors.append(f'cloud {name}: {failure}')
            process.say(f'real cloud: cloud {name}: {failure}')

    upgrade_errors = []
    upgraded = attempt('upgrade', upgrade.run, upgrade_errors)
    on_the_series = bool(upgraded) and upgraded.series_again == 'ok'
    if not on_the_series:
        attempt('down', deploy.down, upgrade_errors)
    errors = []
    report = attempt('scenario', lambda: scenario.run(up=not on_the_series),
                     errors)
    attempt('down', deploy.down, errors)
    failed_steps = report.failures() if report else []
    results = [suites.SuiteResult(
        name='real cloud scenario',
        passed=len(report.steps) - len(failed_steps) if report else 0,
        failed=len(failed_steps) + len(errors),
        error='; '.join(errors + failed_steps))]
    for key, name in (('tempest', 'tempest'),
                      ('openstacksdk', 'openstacksdk functional'),
                      ('openstackclient',
                       'python-openstackclient functional')):
        run = getattr(report, key) if report else None
        if run:
            results.append(suites.SuiteResult(
                name=f'real cloud {name}', passed=run['passed'],
                failed=run['failed'], skipped=run['skipped'],
                error=', '.join(run['failures'])))
    failed_phases = upgraded.failures() if upgraded else []
    phases_passed = (sum(step['passed'] for step in upgraded.steps)
                     if upgraded else 0)
    results.append(suites.SuiteResult(
        name='real cloud rolling upgrade', passed=phases_passed,
        failed=(len(failed_phases) if upgraded else upgrade.PHASES) +
        len(upgrade_errors),
        error='; '.join(upgrade_errors + failed_phases)))
    process.say(f'real cloud: upgrade, scenario and down in '
                f'{time.monotonic() - started:.0f}s')
    return results


class Timings:
    """How long each part of CI took, printed before the summary: where
    to look when CI grows past its budget.
    """

    def __init__(self):
        self.parts = []

    def run(self, label, function, *args, **kwargs):
        started = time.monotonic()
        result = function(*args, **kwargs)
        self.parts.append((label, time.monotonic() - started))
        return result

    def print(self, total):
        """The breakdown as a table: minutes and share of the total."""
        process.say('')
        process.say(f'{"time by part of CI":<44} {"min":>6} {"share":>6}')
        for label, seconds in self.parts:
            process.say(f'{label:<44} {seconds / 60:6.1f} '
                        f'{100 * seconds / total:5.0f}%')
        process.say(f'{"total":<44} {total / 60:6.1f}')


def prepare(function, *args):
    """Build something a later part needs; a failure is that part's to
    report (it builds it again), not a reason to stop CI.
    """
    try:
        function(*args)
    except Exception as failure:  # the part that needs it reports it
        process.say(f'{getattr(function, "__name__", function)}: '
                    f'{failure}')


def go_work_tree(project):
    """A Go module's work tree, applied if missing, with its workspace."""
    go_tests.workspace(project, queue.ensure_tree(project))


def virtualenv(project):
    """The project's test virtualenv, its work tree applied first if
    there is none.
    """
    queue.ensure_tree(project)
    virtualenvs.ensure_venv(project)


def in_the_background(lane):
    """`lane` made to run process.BACKGROUND_NICE lower in priority (at
    most nice 19): Linux gives each thread a nice value of its own, which
    the commands it starts inherit.
    """
    def reniced():
        thread = threading.get_native_id()
        nice = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread,
                       min(nice + process.BACKGROUND_NICE, 19))
        return lane()
    return reniced


def lanes(foreground, *background):
    """foreground() here while each of `background` runs in a thread of
    its own; the results of foreground(), then of each background lane.
    """
    with concurrent.futures.ThreadPoolExecutor(
            max_workers=len(background)) as pool:
        running = [pool.submit(lane) for lane in background]
        results = list(foreground())
        for lane in running:
            results.extend(lane.result())
        return results


def nova_tests(nova, timings, databases):
    """Nova's functional, then unit tests of CI's narrow selection."""
    results = timings.run('nova functional tests (beside the cloud)',
                          suites.test, nova, unit=False, wide=False)
    results.extend(timings.run('nova unit tests (beside the cloud)',
                               suites.test, nova, functional=False,
                               databases=databases, background=True,
                               wide=False))
    return results


def cinder_and_devstack(cinder, timings, databases):
    """Cinder's tests, flake8 and contract suite, and the devstack
    plugin's tests: their results.
    """
    results = []
    if queue.read_series(cinder):
        results.extend(timings.run('cinder tests (beside the cloud)',
                                   suites.test, cinder, databases=databases,
                                   background=True))
        results.append(timings.run('cinder flake8 (beside the cloud)',
                                   linters.lint, cinder))
        results.append(timings.run('cinder contract (beside the cloud)',
                                   contract.contract, cinder))
        if cinder.name in CI_EACH_PROJECTS:
            results.append(timings.run('cinder each commit (beside the '
                                       'cloud)', each.suite, cinder))
    # The devstack plugin's tests are not a package: no top-level directory.
    results.append(timings.run('devstack plugin tests (beside the cloud)',
                               suites.tool_self_test, 'devstack/tests',
                               'devstack plugin tests', top_level=None))
    # Of `tools/series mutants`, what its time allows: the mutants of the
    # projects whose tests take seconds; Nova's take a stestr run each.
    results.append(timings.run('mutants (beside the cloud)', mutants.suite,
                               CI_MUTANT_PROJECTS))
    return results


def docs_and_clients(projects, timings):
    """Nova's docs, style and type checks, the spec and the manual, and
    the tests and style checks of os-traits and the clients: their
    results.
    """
    nova = projects['nova']
    results = timings.run('nova docs', patched_docs.docs, nova)
    results.append(timings.run('nova flake8', linters.lint, nova))
    results.append(timings.run('nova mypy', linters.typecheck, nova))
    results.append(timings.run('tools flake8', linters.lint_tools, nova))
    results.extend(timings.run('spec checks', spec.spec_checks, nova))
    results.extend(timings.run('manual', manual.check, nova))
    # os-traits and the clients (openstacksdk, python-openstackclient,
    # tempest): their own unit tests of what the series changes, and their
    # style checks. The clients' end-to-end checks run against the demo,
    # before.
    for name, project in projects.items():
        if name not in ('nova', 'cinder') and queue.read_series(project):
            kind = kinds.of(project)
            results.extend(timings.run(f'{name} tests', kind.test, project))
            if project.released_requirement_tests:
                results.extend(timings.run(
                    f'{name} against released requirements',
                    released_requirement.suite, project))
            results.append(timings.run(f'{name} lint', kind.lint, project))
            if name in CI_EACH_PROJECTS:
                results.append(timings.run(f'{name} each commit',
                                           each.suite, project))
    # cinder-csi's node service with its series on this machine's block
    # devices (loop devices): what no guest of the real cloud runs.
    cinder_csi = projects.get(cinder_csi_node.PROJECT)
    if cinder_csi and queue.read_series(cinder_csi):
        results.append(timings.run('cinder-csi node service on loop devices',
                                   cinder_csi_node.suite))
    # The tool tests that run the real stestr skip before any virtualenv
    # exists, as in the first run above; they run here, where they must
    # pass.
    results.append(timings.run('tool tests with a virtualenv',
                               virtualenv_tool_tests))
    return results


def ci(args):
    started = time.monotonic()
    timings = Timings()
    databases = not args.no_databases
    if databases:
        # With the cloud's packages too: the tool tests boot the guest
        # and start the compute hosts' namespaces over libvirt's
        # directories, and would skip without them.
        timings.run('test host setup', process.run,
                    [config.ROOT / 'tools' / 'setup-test-host', '--cloud'],
                    capture=False)
    results = [timings.run('tool tests', suites.tool_self_test)]
    projects = config.load_projects()
    for name in projects:
        if (projects[name].patches / 'series').exists():
            # tools/setup-test-host installs quilt with the databases.
            results.append(timings.run(f'{name} series check', check_result,
                                       projects[name], quilt=databases))
    results.append(timings.run('standalone clone', standalone_clone,
                               projects))
    nova = projects['nova']
    # The demo applies the series again (a new work tree) and builds
    # Nova's virtualenv: it runs before anything else uses either.
    results.append(timings.run('demo end to end', demo.end_to_end))
    # The virtualenvs that install Cinder's work tree (an editable install
    # rewrites its egg-info) are built before anything runs beside them.
    cinder = projects['cinder']
    if queue.read_series(cinder):
        timings.run('cinder virtualenv', prepare, virtualenv, cinder)
    timings.run('cloud virtualenv', prepare, service_venv.ensure)
    # The work trees the cloud's steps build Go programs from or against
    # (cloud-provider-openstack's with its workspace), before the lane
    # that tests them runs beside the cloud.
    for name in ('gophercloud', 'cloud-provider-openstack'):
        if queue.read_series(projects[name]):
            timings.run(f'{name} work tree', prepare, go_work_tree,
                        projects[name])
    # The real cloud mostly waits (on its guests, services and timeouts):
    # everything else runs beside it in two lanes at a background priority
    # (in_the_background()), on the CPU it leaves and at full speed once
    # it is down. They share no virtualenv, stestr repository or database
    # with the cloud nor with each other.
    results.extend(lanes(
        lambda: timings.run('real cloud: upgrade, scenario, down',
                            real_cloud),
        in_the_background(lambda: nova_tests(nova, timings, databases)),
        in_the_background(lambda: (
            docs_and_clients(projects, timings) +
            cinder_and_devstack(cinder, timings, databases)))))
    suites.print_table(results)
    timings.print(time.monotonic() - started)
    return suites.print_totals(results)
