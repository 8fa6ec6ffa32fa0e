"""`cloud upgrade`: a rolling upgrade on the real two-host cloud, from
the pristine releases (Nova 34.0.0, Cinder 29.0.0) to the series with
compute host B left behind, then B, then back to the pristine releases
as the packagers' page tells an operator to. Every attachment is checked
as in the scenario (API, libvirt XML, QEMU, guest, RBD image) after each
change; each refusal is recorded with its status and body. Writes
.work/cloud/upgrade.json. When every phase passed, the whole cloud goes
back onto the series at once, as `cloud up` would leave it, for
`cloud scenario` to run on.
"""

import os
import time

from series.cloud.client import check
from series.cloud.client import Cloud
from series.cloud import databases
from series.cloud import deploy
from series.cloud import hosts
from series.cloud import layout
from series.cloud import releases
from series.cloud import rest
from series.cloud import services
from series.cloud import steps
from series.cloud.tracker import Tracker
from series.cloud.tracker import UpgradeReport
from series.cloud import upgrade_phases
from series import config
from series import process

PHASES = len(upgrade_phases.PHASES)


def say(message):
    process.say(f'upgrade: {message}')


def run_phases(upgrade, phases=upgrade_phases.PHASES):
    """The phases in order (each needs the one before), each compared
    with its ledger; the report.
    """
    upgrade.tracker.cloud.delete_leftovers()
    steps.run_table(upgrade.tracker, phases,
                    lambda phase: checked_phase(upgrade, phase))
    return upgrade.tracker.report


def checked_phase(upgrade, phase):
    """What running `phase` calls: the phase, then the check that each
    running Nova and Cinder service runs the release of its part
    (running_problems()) and each part's environment imports Nova and
    Cinder from that release (imported_problems()); the services'
    versions after it, passed or not. run_step() then compares its ledger
    with what Nova, Cinder and libvirt hold, as after a scenario step.
    """
    report = upgrade.tracker.report

    def checked():
        imported = {}
        try:
            detail = phase.function(upgrade)
            running = running_releases()
            report.running[phase.name] = running
            imported.update({part: releases.imported_from(part)
                             for part in upgrade_phases.PARTS})
            problems = (running_problems(running) +
                        imported_problems(imported))
            check(not problems, '; '.join(problems))
            return detail
        finally:
            report.versions[phase.name] = versions(upgrade.tracker.cloud,
                                                   imported)
    return checked


def imported_problems(imported):
    """A part whose environment imports Nova or Cinder from elsewhere
    than its release: the pristine releases' directory, or (the series)
    anywhere else. `imported` is {part: releases.imported_from(part)}.
    """
    pristine = str(releases.pristine_path()) + os.sep
    problems = []
    for part, directories in sorted(imported.items()):
        release = releases.release_of(part)
        for project in releases.PROJECTS:
            directory = directories.get(project)
            if directory is None:
                problems.append(f'{part} does not import {project}')
            elif directory.startswith(pristine) != (
                    release == releases.PRISTINE):
                problems.append(f'{part} imports {project} from '
                                f'{directory}, not its release {release}')
    return problems


def versions(cloud, imported=None):
    """What the cloud says of its services: os-services, and the
    versions in Nova's and Cinder's service tables.
    """
    listed = cloud.admin.get('nova-api', '/os-services',
                             microversion=cloud.microversion)['services']
    nova = databases.query(
        'mae_nova', 'SELECT host, `binary`, version FROM services WHERE '
        'deleted = 0 ORDER BY host, `binary`')
    cinder = databases.query(
        'mae_cinder', 'SELECT host, `binary`, rpc_current_version, '
        'object_current_version FROM services WHERE deleted = 0 ORDER BY '
        'host, `binary`')
    compute_api = cloud.member.get('nova-api', '/')['version']
    return {
        'releases': {part: releases.release_of(part)
                     for part in upgrade_phases.PARTS},
        'imported from': imported or {
            part: releases.imported_from(part)
            for part in upgrade_phases.PARTS},
        'compute API maximum': compute_api['version'],
        'os-services': [
            {key: entry[key] for key in ('host', 'binary', 'state',
                                         'status', 'forced_down')}
            for entry in listed],
        'nova_services': [dict(zip(('host', 'binary', 'version'), row))
                          for row in nova],
        'cinder_services': [dict(zip(('host', 'binary', 'rpc', 'objects'),
                                     row)) for row in cinder]}


def start_pristine():
    """A new cloud of the pristine releases, in place of what a cloud
    that no longer runs left.
    """
    running = [service.name for service in services.all_services()
               if service.pid()]
    if running or deploy.cluster().pid('mon.a'):
        raise config.SeriesError(
            'a cloud is up: the upgrade starts from a new one of the '
            'pristine releases (`tools/series cloud down` first)')
    deploy.down()
    for part in upgrade_phases.PARTS:
        releases.set_release(part, releases.PRISTINE)
    deploy.up()


def service_parts():
    """{service name: the part whose release it runs} of Nova's and
    Cinder's services.
    """
    parts = {name: releases.CONTROL
             for name in upgrade_phases.CONTROL_SERVICES}
    parts.update({services.compute(host).name: host.name
                  for host in hosts.HOSTS})
    return parts


# The service version each release's Nova services write when they start.
SERVICE_VERSIONS = {databases.PRISTINE_SERVICE_VERSION: releases.PRISTINE,
                    databases.SERIES_SERVICE_VERSION: releases.SERIES}


def running_releases():
    """{service: {'part', 'pid', 'runs', 'by', 'should'}} of the running
    Nova and Cinder services: the release each process runs, read from
    the process itself (its environment, or, where setproctitle blanked
    it, the service version it wrote when it started), and the release
    of its part.
    """
    running, written = {}, None
    for name, part in service_parts().items():
        service = services.by_name(name)
        pid = service.pid()
        runs = releases.running_release(pid) if pid else None
        by = 'its environment'
        if pid and runs is None and service.reports_as:
            written = (written if written is not None
                       else databases.written_versions())
            version = written.get(service.reports_as[1:])
            runs = SERVICE_VERSIONS.get(version)
            by = f'the service version it wrote ({version})'
        running[name] = {'part': part, 'pid': pid, 'runs': runs, 'by': by,
                         'should': releases.release_of(part)}
    return running


def running_problems(running):
    """A service not running, running another release than its part's,
    or whose release its process does not tell.
    """
    def problem(entry):
        if not entry['pid']:
            return 'is not running'
        if entry['runs'] is None:
            return f'does not tell its release ({entry["by"]})'
        return (f'runs {entry["runs"]} ({entry["by"]}), its part '
                f'{entry["part"]} {entry["should"]}')
    return [f'{name} {problem(entry)}'
            for name, entry in sorted(running.items())
            if entry['runs'] != entry['should']]


def back_on_the_series(series_head):
    """The whole cloud on the series again, at once (an offline upgrade
    of the rolled-back cloud): Nova's and Cinder's services stopped, every
    part switched, the databases synced, the services started; then
    series_state() must be that of the series (alembic head
    `series_head`). series_state().
    """
    stopped = [service.name for service in services.all_services()
               if service.name.startswith(('nova-', 'cinder-'))]
    services.stop_all([services.by_name(name) for name in stopped])
    for part in upgrade_phases.PARTS:
        releases.set_release(part, releases.SERIES)
    databases.sync_databases()
    upgrade_phases.start_services(stopped, rest.admin_session())
    # Each nova-compute writes its service version as it starts, which
    # start_services() can return before: a state report of the stopped
    # nova-compute, queued for the conductor, counts as the new one's.
    databases.compute_versions(databases.series_compute_versions())
    state = databases.series_state()
    problems = databases.series_problems(state, series_head)
    check(not problems, 'back on the series: ' + '; '.join(problems))
    return state


def run():
    """A new cloud of the pristine releases, the phases, and the cloud
    back on the series if they all passed; the report (a
    tracker.UpgradeReport), whose `series_again` says 'ok' or why not (a
    failed phase leaves the cloud as it was, to be looked at).
    """
    started = time.monotonic()
    start_pristine()
    up_seconds = round(time.monotonic() - started, 1)
    report = run_phases(upgrade_phases.Upgrade(Tracker(
        Cloud(microversion=upgrade_phases.OLD), UpgradeReport())))
    report.up_seconds = up_seconds
    if report.phases_passed():
        say('every phase passed: the whole cloud back on the series')
        switched = time.monotonic()
        try:
            report.series_state = back_on_the_series(
                report.database['upgrade']['alembic'])
            report.series_again = 'ok'
        except Exception as error:  # reported, as a phase's failure is
            report.series_again = f'{type(error).__name__}: {error}'
        report.series_again_seconds = round(time.monotonic() - switched, 1)
    report.seconds = round(time.monotonic() - started, 1)
    path = layout.directory() / 'upgrade.json'
    layout.write_json(path, report.to_json())
    for step in report.steps:
        process.say(f'phase {step["number"]} {step["step"]:16} '
                    f'{"passed" if step["passed"] else "FAILED":6} '
                    f'{step["seconds"]:6}s  {step["title"]}')
    for refusal in report.refusals:
        process.say(f'  refused {refusal["status"]}: {refusal["request"]}')
    passed = sum(step['passed'] for step in report.steps)
    say(f'{passed} of {PHASES} phases passed in {report.seconds}s; report '
        f'in {path.relative_to(config.ROOT)}')
    return report


def main():
    report = run()
    say(f'the cloud back on the series: {report.series_again}')
    return 0 if report.passed() else 1
