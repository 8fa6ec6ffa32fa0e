"""What a run on the real cloud made and what it expects of it: the
servers and volumes it made, the ledger of its attachments, what each
volume's RBD image held before anything could write it, and the report
that becomes report.json (upgrade.json for the rolling upgrade).
"""

import dataclasses

from series.cloud.client import PREFIX
from series.cloud import hosts
from series.cloud import ledger
from series.cloud import probes

SIZE_GIB = 1


def host_entries():
    return {host.name: {'libvirt_uri': host.uri, 'address': host.address}
            for host in hosts.HOSTS}


@dataclasses.dataclass
class Report:
    """What report.json holds: the hosts, each server as last checked,
    one row per attachment per check, one entry per step, the volumes'
    RBD digests, the faults, the tempest, openstacksdk,
    python-openstackclient and gophercloud runs, the cinder-csi calls, the
    csi-sanity specs.
    """

    hosts: dict = dataclasses.field(default_factory=host_entries)
    servers: dict = dataclasses.field(default_factory=dict)
    attachments: list = dataclasses.field(default_factory=list)
    steps: list = dataclasses.field(default_factory=list)
    volumes: dict = dataclasses.field(default_factory=dict)
    faults: list = dataclasses.field(default_factory=list)
    tempest: dict = None
    openstacksdk: dict = None
    openstackclient: dict = None
    gophercloud: dict = None
    # The cinder-csi step's calls, each with its answer.
    cinder_csi: dict = None
    # The csi-sanity step's specs, each with its outcome.
    csi_sanity: dict = None
    # {server: {round (boot-seq-disk): insmod's and the request's
    # errors}} of the guest rounds whose bypass write logged no result
    # (guest.missing()).
    bypass_missing: dict = dataclasses.field(default_factory=dict)
    # How long the run took.
    seconds: float = None

    # Left out of the JSON while empty.
    OPTIONAL = ('bypass_missing',)

    def to_json(self):
        """The report as a dict of JSON values."""
        return {field.name: getattr(self, field.name)
                for field in dataclasses.fields(self)
                if getattr(self, field.name) or
                field.name not in self.OPTIONAL}

    def failures(self):
        """What failed, each as `name: detail`: the run's verdict."""
        return [f'{step["step"]}: {step["detail"]}' for step in self.steps
                if not step['passed']]

    def passed(self):
        return bool(self.steps) and not self.failures()


@dataclasses.dataclass
class UpgradeReport(Report):
    """What upgrade.json holds besides a report's sections: per phase the
    services' versions and the release each running service runs, every
    refusal, the database facts.
    """

    versions: dict = dataclasses.field(default_factory=dict)
    refusals: list = dataclasses.field(default_factory=list)
    database: dict = dataclasses.field(default_factory=dict)
    # Always empty: upgrade.json has held it from the start.
    phases: list = dataclasses.field(default_factory=list)
    running: dict = dataclasses.field(default_factory=dict)
    # How long `cloud up` of the pristine releases took.
    up_seconds: float = None
    # 'ok' once the whole cloud is back on the series after the phases,
    # or why not; its state then, and how long that took.
    series_again: str = 'not tried: a phase failed'
    series_state: dict = None
    series_again_seconds: float = None

    OPTIONAL = ('bypass_missing', 'running', 'series_state',
                'series_again_seconds')

    def phases_passed(self):
        """Whether every phase passed (the cloud may then go back on the
        series).
        """
        return bool(self.steps) and not super().failures()

    def failures(self):
        """The phases' failures, and the cloud not back on the series
        after phases that all passed.
        """
        failures = super().failures()
        if self.steps and not failures and self.series_again != 'ok':
            failures.append(f'back on the series: {self.series_again}')
        return failures


class Tracker:
    """What a run made (servers, volumes) and what each of its
    attachments must be, with the report of what was seen.
    """

    def __init__(self, cloud, report=None):
        self.cloud = cloud
        self.report = report or Report()
        self.servers = []
        # name -> volume id.
        self.volumes = {}
        self.ledger = ledger.Ledger()
        # server -> the guest's boot id at its last check.
        self.boots = {}
        # server -> the guest kernel's fault lines seen at its checks.
        self.kernel_faults = {}
        # (server, volume) -> the server's slot in the volume's RBD image
        # before the attachment began.
        self.baseline = {}
        # volume -> [digest of its RBD image when made, what may have
        # written it since: 'rw' (a guest), 'copy' (a migration) or None].
        self.written = {}
        self.current_step = None

    def new_volume(self, name, multiattach=True, image=None):
        volume = self.cloud.create_volume(name, multiattach, image)
        self.volumes[name] = volume['id']
        [digest] = probes.digests([self.cloud.rbd_image(volume['id'])])
        self.written[volume['id']] = [digest, None]
        self.report.volumes[volume['id']] = {'name': name,
                                             'digest_made': digest}
        return volume['id']

    def expect(self, server_id, volume_id, mode, region, requested=None):
        """The attachment must be `mode` (`requested` the mode asked for,
        if another); `region`, the volume's slot region read before it
        began, says what the server's slot held.
        """
        self.ledger.attach(server_id, volume_id, mode, requested or mode)
        self.baseline[server_id, volume_id] = probes.slot_in_region(
            region, self.cloud.slot_of(server_id), SIZE_GIB)
        if mode == 'rw':
            self.written[volume_id][1] = 'rw'

    def attach(self, server_id, volume_id, mode):
        region = self.slot_region(volume_id)
        self.cloud.attach(server_id, volume_id, mode)
        self.expect(server_id, volume_id, mode, region)

    def slot_region(self, volume_id):
        return probes.slot_region(self.cloud.rbd_image(volume_id), SIZE_GIB)

    def detach(self, server_id, volume_id):
        self.cloud.detach(server_id, volume_id)
        self.forget(server_id, volume_id)

    def forget(self, server_id, volume_id):
        self.ledger.detach(server_id, volume_id)
        del self.baseline[server_id, volume_id]

    def placed(self, server_id, host_name=None):
        """The server is on `host_name` (the host the step put it on),
        or, without one, where the scheduler put it.
        """
        self.ledger.place(server_id,
                          host_name or self.cloud.host_of(server_id))

    def placements(self):
        """{server id: host} of the run's servers."""
        return {server['id']: server['OS-EXT-SRV-ATTR:host']
                for server in self.cloud.servers(f'name={PREFIX}')
                if server['id'] in self.servers}

    def other_host(self, server_id):
        current = self.cloud.host_of(server_id)
        return next(host.name for host in hosts.HOSTS if host.name != current)

    def snapshot(self):
        """What a refused request must not change: the servers, every
        volume's status and attachments.
        """
        servers = sorted((server['id'], server['status'])
                         for server in self.cloud.servers(f'name={PREFIX}'))
        volumes = {}
        for name, volume_id in self.volumes.items():
            volume = self.cloud.volume(volume_id)
            volumes[name] = (volume['status'], sorted(
                a['attachment_id'] for a in volume['attachments']))
        return servers, volumes
