"""The cloud's processes: started detached with their output in
.work/cloud/log/<name>.log and their PID in .work/cloud/run/<name>.pid,
stopped by that PID once /proc confirms it is still the process this
cloud started (same PID, same start time).
"""

import dataclasses
import datetime
import os
from pathlib import Path
import signal
import subprocess
import time

from series.cloud import hosts
from series.cloud import layout
from series.cloud import releases
from series.cloud import rest
from series.cloud import service_venv
from series import config
from series import process

STOP_SECONDS = 30
# The API services of the projects the series patches.
UPGRADED_APIS = ('cinder-api', 'nova-api')
MACVTAP_AGENT = Path(__file__).with_name('macvtap_agent.py')


@dataclasses.dataclass
class Service:
    name: str
    command: tuple
    # The API port, for the API services.
    port: int = 0
    # (nova-api|cinder-api, binary, host) of an RPC service, as
    # os-services reports it.
    reports_as: tuple = ()
    # The compute host it belongs to (libvirtd, virtlogd, nova-compute,
    # Neutron's agent).
    host: object = None
    # The binary of a Neutron agent, which Neutron's agent list reports.
    neutron_agent: str = ''
    # What it adds to the environment (series.cloud.releases).
    env: dict = dataclasses.field(default_factory=dict)

    @property
    def pid_file(self):
        return layout.pid_file(self.name)

    def pid(self):
        """The PID of this service if it runs, else None."""
        try:
            pid, started = self.pid_file.read_text().split()
            pid = int(pid)
        except (OSError, ValueError):
            return None
        return pid if start_time(pid) == started else None

    def start(self):
        log = layout.log(self.name)
        log.parent.mkdir(parents=True, exist_ok=True)
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        # The cloud's own commands first (series.cloud.ceph.CLI_WRAPPER).
        env = dict(os.environ, PATH=f'{layout.directory() / "bin"}'
                   f'{os.pathsep}{os.environ["PATH"]}', **self.env)
        with open(log, 'ab') as output:
            proc = subprocess.Popen(
                [str(part) for part in self.command], stdin=subprocess.DEVNULL,
                stdout=output, stderr=subprocess.STDOUT,
                start_new_session=True, cwd=layout.directory(), env=env)
        self.pid_file.write_text(f'{proc.pid} {start_time(proc.pid)}\n')
        return proc

    def stop(self):
        """SIGTERM, then SIGKILL after STOP_SECONDS; True if it ran."""
        return bool(stop_all([self]))

    def signal(self, number):
        pid = self.pid()
        if pid is not None:
            os.kill(pid, number)
        return pid

    def log_tail(self, lines=20):
        try:
            text = layout.log(self.name).read_text(errors='replace')
        except OSError:
            return '(no log)'
        return '\n'.join(text.splitlines()[-lines:])


def start_time(pid):
    """When `pid` started (clock ticks since boot), or None if it is gone
    or a zombie. With the PID it names one process: a PID file may
    outlive its process and the PID be reused, and services rewrite
    their command lines (setproctitle).
    """
    try:
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(') ', 1)[1]
    except OSError:
        return None
    fields = fields.split()
    return None if fields[0] == 'Z' else fields[19]


def stop_all(running):
    """Stop the services together: SIGTERM to each, then wait, SIGKILL
    (their process group) after STOP_SECONDS. The names of those that
    ran.
    """
    stopping = [(service, service.signal(signal.SIGTERM))
                for service in running]
    stopping = [(service, pid) for service, pid in stopping if pid]
    deadline = time.monotonic() + STOP_SECONDS
    while any(service.pid() for service, _ in stopping) and (
            time.monotonic() < deadline):
        time.sleep(0.2)
    for service, pid in stopping:
        if service.pid():
            os.killpg(pid, signal.SIGKILL)
    for service in running:
        service.pid_file.unlink(missing_ok=True)
    return [service.name for service, _ in stopping]


def conf(service, name):
    return layout.etc(service) / name


def all_services():
    """Every service, in start order: each compute host's virtlogd and
    libvirtd, the control plane (Neutron's RPC server and each host's
    macvtap agent among it), each host's nova-compute.
    """
    uwsgi = service_venv.bin('uwsgi')
    nova_conf = ('--config-file', conf('nova', 'nova.conf'))
    cinder_conf = ('--config-file', conf('cinder', 'cinder.conf'))
    services = []
    for host in hosts.HOSTS:
        services += [
            Service(f'virtlogd-{host.key}', host.namespaced(
                'virtlogd', '--pid-file', host.pid_file('virtlogd')),
                host=host),
            Service(f'libvirtd-{host.key}', host.namespaced(
                'libvirtd', '--listen', '--pid-file',
                host.pid_file('libvirtd')), host=host)]
    control = releases.environment(releases.CONTROL)
    for name in ('keystone', 'placement', 'glance-api', 'neutron-api',
                 'cinder-api', 'nova-api'):
        services.append(Service(
            name, (uwsgi, '--ini', layout.etc('uwsgi') / f'{name}.ini'),
            port=layout.PORTS[name],
            env=control if name in UPGRADED_APIS else {}))
    neutron_conf = ('--config-file', conf('neutron', 'neutron.conf'))
    services.append(Service('neutron-rpc-server', (
        service_venv.bin('neutron-rpc-server'), *neutron_conf, '--config-file',
        conf('neutron', 'ml2_conf.ini'))))
    for host in hosts.HOSTS:
        services.append(Service(
            f'neutron-macvtap-agent-{host.key}', (
                service_venv.bin('python'), MACVTAP_AGENT, *neutron_conf,
                '--config-file', conf('neutron', f'macvtap-{host.key}.conf')),
            host=host, neutron_agent='neutron-macvtap-agent'))
    for binary in ('cinder-scheduler', 'cinder-volume'):
        services.append(Service(binary,
                                (service_venv.bin(binary), *cinder_conf),
                                reports_as=('cinder-api', binary, None),
                                env=control))
    for binary in ('nova-conductor', 'nova-scheduler'):
        services.append(Service(binary, (service_venv.bin(binary), *nova_conf),
                                reports_as=('nova-api', binary, None),
                                env=control))
    for host in hosts.HOSTS:
        services.append(Service(
            f'nova-compute-{host.key}', host.namespaced(
                service_venv.bin('nova-compute'), '--config-file',
                conf('nova', f'compute-{host.key}.conf')),
            reports_as=('nova-api', 'nova-compute', host.name), host=host,
            env=releases.environment(host.name)))
    return services


def by_name(name):
    return {service.name: service for service in all_services()}[name]


def compute(host):
    return by_name(f'nova-compute-{host.key}')


def hypervisors():
    """Each compute host's virtlogd and libvirtd."""
    return [service for service in all_services()
            if service.name.startswith(('virtlogd-', 'libvirtd-'))]


def http_healthy(service):
    try:
        reply = rest.request('GET', f'http://{layout.HOST}:{service.port}/',
                             timeout=5)
    except OSError:
        return False
    return reply.status < 500


def libvirt_healthy(host):
    return subprocess.run(['virsh', '-c', host.uri, 'version'],
                          stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def reported_up(admin, since=None):
    """{(api service, binary, host)} of the RPC services Nova and Cinder
    list as up (and, with `since`, a timezone-aware datetime, whose last
    report is later), and the same with host None.
    """
    found = set()
    for api_service, path in (('nova-api', '/os-services'),
                              ('cinder-api', '/os-services')):
        try:
            reply = admin.call('GET', api_service, path)
        except OSError:
            continue
        if reply.status != 200:
            continue
        for entry in reply.body['services']:
            if since and not reported_after(entry, since):
                continue
            if entry['state'] == 'up' and entry['status'] == 'enabled':
                found.add((api_service, entry['binary'], entry['host']))
                found.add((api_service, entry['binary'], None))
    return found


def reported_after(entry, since):
    """Whether an os-services entry's updated_at (UTC, no offset) is
    later than `since`.
    """
    if not entry.get('updated_at'):
        return False
    updated = datetime.datetime.fromisoformat(entry['updated_at'])
    return updated.replace(tzinfo=datetime.timezone.utc) > since


def agent_alive(admin, service):
    """Whether Neutron lists the agent `service` as alive."""
    try:
        reply = admin.call('GET', 'neutron-api',
                           f'/agents?host={service.host.name}&binary='
                           f'{service.neutron_agent}')
    except OSError:
        return False
    return reply.status == 200 and any(
        agent['alive'] for agent in reply.body['agents'])


def health(service, admin=None, up=None):
    """True, False, or None when it cannot be told (no token)."""
    if service.pid() is None:
        return False
    if service.port:
        return http_healthy(service)
    if service.name.startswith('libvirtd-'):
        return libvirt_healthy(service.host)
    if service.neutron_agent:
        return None if admin is None else agent_alive(admin, service)
    if service.reports_as:
        if up is None:
            if admin is None:
                return None
            up = reported_up(admin)
        return service.reports_as in up
    return True


def start(service, timeout=120, admin=None):
    """Start `service` unless it runs; wait until it is healthy."""
    proc = service.start() if service.pid() is None else None

    def exited():
        return proc is not None and proc.poll() is not None

    try:
        rest.wait(f'{service.name} healthy',
                  lambda: exited() or health(service, admin),
                  timeout, interval=0.5)
    except config.SeriesError:
        raise config.SeriesError(
            f'{service.name} did not become healthy in {timeout}s; the end '
            f'of {layout.log(service.name)}:\n{service.log_tail()}')
    if exited():
        raise config.SeriesError(
            f'{service.name} exited ({proc.returncode}); the end of '
            f'{layout.log(service.name)}:\n{service.log_tail()}')


def rabbitmqctl(*args, check=True):
    return process.run(['rabbitmqctl', '-q', *args], check=check)


def manage(*command, env=None):
    """A management command of the cloud's virtualenv; Nova's and
    Cinder's of the release the control plane runs.
    """
    if command[0] in ('nova-manage', 'cinder-manage'):
        env = dict(env or {}, **releases.environment(releases.CONTROL))
    return process.run([service_venv.bin(command[0]), *command[1:]],
                       cwd=layout.directory(), env=env)
