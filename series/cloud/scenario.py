"""`cloud scenario`: the feature on the real two-host cloud. Every
attachment is checked after each step, on the host that runs the server,
from five places (the API, the libvirt XML, QEMU, the guest, the volume's
RBD image), through live and cold migration, evacuation, shelve and
unshelve, swap, detach and re-attach; then the refusals, the faults
(series.cloud.faults) and tempest. Writes .work/cloud/report.json.
"""

import datetime
import subprocess
import time

from series.cloud import api
from series.cloud.client import BOOT_SECONDS
from series.cloud.client import check
from series.cloud.client import Cloud
from series.cloud.client import Failed
from series.cloud.client import PREFIX
from series.cloud import configs
from series.cloud import deploy
from series.cloud import faults
from series.cloud import hosts
from series.cloud import layout
from series.cloud import ledger
from series.cloud import releases
from series.cloud import sdk_functional
from series.cloud import services
from series.cloud import tempest
from series.cloud import views
from series import config
from series import guest
from series import process

BEFORE = '2.104'
GUEST_SECONDS = 240
POLL_SECONDS = 2
SIZE_GIB = 1
MULTI_CREATE = 4
READ_ONLY_TRAIT = 'COMPUTE_VOLUME_READ_ONLY_ATTACH'
PREFILTER_ATTEMPTS = 2


def say(message):
    process.say(f'scenario: {message}')


def expected_problems(row, read_only):
    """What in an observation (a report row) disagrees with the mode the
    attachment must have.
    """
    want = {'xml_readonly': read_only, 'qemu_ro': read_only,
            'guest_kernel_ro': read_only,
            'guest_write': 'FAILED' if read_only else 'OK',
            'bypass_write': 'EIO' if read_only else 'written',
            'rbd_changed': not read_only}
    seen = dict(row, guest_write=row['guest_write'].split(':')[0])
    wrong = [f'{key}={row[key]}' for key, value in want.items()
             if seen[key] != value]
    if not read_only and row['rbd_changed'] and not row['rbd_by_guest']:
        wrong.append('the slot was written, not by this guest')
    return wrong


def boot_problems(before, after, guest_restart):
    """What the guest's boot id says against `guest_restart` ('restarted':
    the step restarted the guest; 'kept': it must not have; None: no
    claim). `before` is the boot id the last check saw, if any.
    """
    if guest_restart is None or before is None:
        return []
    if guest_restart == 'restarted' and after == before:
        return [f'the guest kept its boot {after}: it did not restart']
    if guest_restart == 'kept' and after != before:
        return [f'the guest restarted (boot {before} -> {after})']
    return []


def image_problems(name, volume_id, changed, written_by):
    """What step 12 finds wrong with a volume's whole RBD image:
    `written_by` is 'rw' (a guest wrote it: it must have changed), 'copy'
    (a migration copied it: it may have) or None (nothing may have).
    """
    if written_by is None and changed:
        return [f'{name} ({volume_id}) changed although never attached rw']
    if written_by == 'rw' and not changed:
        return [f'{name} ({volume_id}) unchanged although a guest had it '
                'rw']
    return []


class Scenario:

    # Whether each step ends with the ledger compared with what Nova,
    # Cinder and libvirt hold (ledger.compare()).
    RECONCILED = True

    def __init__(self, cloud=None):
        self.cloud = cloud or Cloud()
        self.report = {
            'hosts': {host.name: {'libvirt_uri': host.uri,
                                  'address': host.address}
                      for host in hosts.HOSTS},
            'servers': {}, 'attachments': [], 'steps': [], 'volumes': {},
            'faults': [], 'tempest': None, 'openstacksdk': None}
        self.servers = []
        self.volumes = {}
        self.ledger = ledger.Ledger()
        # server -> the guest's boot id at its last check.
        self.boots = {}
        # (server, volume) -> the server's slot in the volume's RBD image
        # before the attachment began.
        self.baseline = {}
        # volume -> [digest of its RBD image when made, what may have
        # written it since: 'rw' (a guest), 'copy' (a migration) or None].
        self.written = {}
        self.current_step = None

    # Bookkeeping

    def step(self, number, title, function, reconcile=True):
        """Run a step; unless `reconcile` is false (a step whose servers
        are not the scenario's), it passes only if the ledger then agrees
        with what the cloud holds.
        """
        say(f'step {number}: {title}')
        self.current_step = number
        before = self.placements()
        started = time.monotonic()
        entry = {'step': number, 'title': title}
        try:
            detail = function() or ''
            if reconcile and self.RECONCILED:
                self.reconcile(entry)
            passed = True
        except (Failed, config.SeriesError, subprocess.CalledProcessError,
                StopIteration) as error:
            detail = f'{type(error).__name__}: {error}'
            passed = False
        seconds = round(time.monotonic() - started, 1)
        after = self.placements()
        entry.update({
            'passed': passed, 'detail': detail, 'seconds': seconds,
            'hosts': {server: [before.get(server), after.get(server)]
                      for server in sorted(set(before) | set(after))}})
        self.report['steps'].append(entry)
        say(f'step {number}: {"passed" if passed else "FAILED"} '
            f'({seconds}s) {detail}')
        return passed

    def reconcile(self, entry):
        """Compare the ledger with what Nova, Cinder and libvirt hold;
        both go into the step's `entry`; fail on any difference.
        """
        entry['expected'] = self.ledger.expected()
        entry['seen'] = ledger.observe(self.cloud, list(self.ledger.hosts),
                                       list(self.volumes.values()))
        problems = ledger.compare(entry['expected'], entry['seen'])
        check(not problems, 'the ledger: ' + '; '.join(problems))

    def placed(self, server_id, host_name=None):
        """The server is on `host_name` (the host the step put it on),
        or, without one, where the scheduler put it.
        """
        self.ledger.place(server_id,
                          host_name or self.cloud.host_of(server_id))

    def placements(self):
        """{server id: host} of the scenario's servers."""
        return {server['id']: server['OS-EXT-SRV-ATTR:host']
                for server in self.cloud.servers(f'name={PREFIX}')
                if server['id'] in self.servers}

    def new_volume(self, name, multiattach=True, image=None):
        volume = self.cloud.create_volume(name, multiattach, image)
        self.volumes[name] = volume['id']
        [digest] = views.digests([self.cloud.rbd_image(volume['id'])])
        self.written[volume['id']] = [digest, None]
        self.report['volumes'][volume['id']] = {'name': name,
                                                'digest_made': digest}
        return volume['id']

    def expect(self, server_id, volume_id, mode, region, requested=None):
        """The attachment must be `mode` (`requested` the mode asked for,
        if another); `region`, the volume's slot region read before it
        began, says what the server's slot held.
        """
        self.ledger.attach(server_id, volume_id, mode, requested or mode)
        self.baseline[server_id, volume_id] = views.slot_in_region(
            region, server_id, SIZE_GIB)
        if mode == 'rw':
            self.written[volume_id][1] = 'rw'

    def attach(self, server_id, volume_id, mode):
        region = self.slot_region(volume_id)
        self.cloud.attach(server_id, volume_id, mode)
        self.expect(server_id, volume_id, mode, region)

    def slot_region(self, volume_id):
        return views.slot_region(self.cloud.rbd_image(volume_id), SIZE_GIB)

    def detach(self, server_id, volume_id):
        self.cloud.detach(server_id, volume_id)
        self.forget(server_id, volume_id)

    def forget(self, server_id, volume_id):
        self.ledger.detach(server_id, volume_id)
        del self.baseline[server_id, volume_id]

    # The checks

    def views(self, server_ids=None, guest_restart=None):
        """Observe every attachment of the servers; fail unless all agree
        with the mode asked for, and each guest's boot id with
        `guest_restart` (boot_problems()).
        """
        server_ids = server_ids or self.servers
        reports = self.fresh_reports(server_ids)
        # Rounds left out because their bypass write logged no result,
        # with insmod's error (guest.latest()).
        for server_id in server_ids:
            missing = guest.missing(self.cloud.console(server_id))
            if missing:
                self.report.setdefault('bypass_missing', {}).setdefault(
                    server_id, {}).update(missing)
        problems = []
        for server_id in server_ids:
            problems += self.record_server(server_id, reports[server_id])
            # guest.latest(): the reports of the guest's latest boot.
            boot = next(iter(reports[server_id].values())).boot
            problems += [f'{server_id}: {problem}' for problem in
                         boot_problems(self.boots.get(server_id), boot,
                                       guest_restart)]
            self.boots[server_id] = boot
        check(not problems, '; '.join(problems))
        hosts_seen = sorted({self.report['servers'][server]['host']
                             for server in server_ids})
        return (f'{len(server_ids)} servers on {", ".join(hosts_seen)}: '
                'API, XML, QEMU, guest kernel, write below it and RBD '
                'agree')

    def wanted_serials(self, server_id):
        return {attachment['volumeId'][:guest.SERIAL_CHARS]
                for attachment in self.cloud.attachments(server_id)}

    def fresh_reports(self, server_ids):
        """{server: {serial: guest.Report}} of rounds the guests began
        after this call: the console lines already there are noted, the
        first new round of each guest marks the time, and only later
        rounds count (a round printed after the mark began after it).
        """
        seen = {server: {(line.boot, line.seq) for line in
                         guest.reports(self.cloud.console(server))}
                for server in server_ids}
        wanted = {server: self.wanted_serials(server)
                  for server in server_ids}
        marks, found = {}, {}

        def probe():
            for server in server_ids:
                if server in found:
                    continue
                console = self.cloud.console(server)
                if server not in marks:
                    lines = guest.reports(console)
                    new = [line for line in lines
                           if (line.boot, line.seq) not in seen[server]]
                    if not new:
                        continue
                    boot = new[-1].boot
                    marks[server] = (boot, min(line.seq for line in new
                                               if line.boot == boot))
                latest = {report.serial: report for report in guest.latest(
                    console, after=marks[server]).values()}
                if wanted[server] <= set(latest):
                    found[server] = latest
            return len(found) == len(server_ids)
        api.wait(f'fresh guest reports of {len(server_ids)} servers', probe,
                 GUEST_SECONDS, interval=POLL_SECONDS)
        return found

    def record_server(self, server_id, in_guest):
        server = self.cloud.server(server_id)
        host = hosts.by_name(server['OS-EXT-SRV-ATTR:host'])
        domain = server['OS-EXT-SRV-ATTR:instance_name']
        self.report['servers'][server_id] = {
            'host': host.name, 'domain': domain,
            'domain_uuid': hosts.virsh(host, 'domuuid', domain).stdout.strip()}
        disks = views.domain_disks(host, domain)
        attachments = self.cloud.attachments(server_id)
        slots = views.slots([(self.cloud.rbd_image(attachment['volumeId']),
                              SIZE_GIB, server_id)
                             for attachment in attachments])
        problems = []
        for attachment, slot in zip(attachments, slots):
            volume_id = attachment['volumeId']
            device, xml_ro, qemu_ro = disks.get(volume_id, (None,) * 3)
            report = in_guest[volume_id[:guest.SERIAL_CHARS]]
            baseline = self.baseline.get((server_id, volume_id))
            write = report.write + (f': {report.error}' if report.error
                                    else '')
            row = {'step': self.current_step, 'server_id': server_id,
                   'volume_id': volume_id, 'host': host.name,
                   'device': attachment['device'],
                   'api_mode': attachment.get('attach_mode'),
                   'xml_readonly': xml_ro, 'qemu_ro': qemu_ro,
                   'guest_kernel_ro': report.ro, 'guest_write': write,
                   'bypass_write': report.bypass_text,
                   'rbd_changed': (None if baseline is None
                                   else slot != baseline),
                   'rbd_by_guest': slot.startswith(guest.marker(server_id)),
                   'guest_round': f'{report.boot}/{report.seq}'}
            self.report['attachments'].append(row)
            mode = self.ledger.mode(server_id, volume_id)
            if mode is None:
                continue
            expected = mode == 'ro'
            wrong = expected_problems(row, expected)
            if report.sector != guest.slot_sector(server_id,
                                                  SIZE_GIB << 30):
                wrong.append(f'the guest wrote sector {report.sector}, not '
                             "its instance's slot")
            if row['api_mode'] != self.ledger.requested[server_id,
                                                        volume_id]:
                wrong.append(f'api_mode={row["api_mode"]}')
            if wrong:
                problems.append(
                    f'{volume_id} on {server_id} ({host.name}), expected '
                    f'{"ro" if expected else "rw"}: {", ".join(wrong)}')
        return problems

    def other_host(self, server_id):
        current = self.cloud.host_of(server_id)
        return next(host.name for host in hosts.HOSTS if host.name != current)

    # 1
    def multi_create(self):
        root = self.new_volume('root', image=self.cloud.image())
        region = self.slot_region(root)
        bdm = [{'boot_index': 0, 'uuid': root, 'source_type': 'volume',
                'destination_type': 'volume', 'attach_mode': 'ro'}]
        reply = self.cloud.create_servers('multi', bdm, count=MULTI_CREATE)
        self.servers = self.cloud.reserved(reply)
        check(len(self.servers) == MULTI_CREATE,
              f'{len(self.servers)} servers of {MULTI_CREATE} created')
        for server_id in self.servers:
            self.cloud.wait_server(server_id)
            self.placed(server_id)
            self.expect(server_id, root, 'ro', region)
        attachments = self.cloud.volume(root)['attachments']
        check(sorted(a['server_id'] for a in attachments) == self.servers,
              f'Cinder lists {len(attachments)} attachments of the root, '
              'not one per server')
        placed = self.placements()
        check(set(placed.values()) == {host.name for host in hosts.HOSTS},
              f'the {MULTI_CREATE} servers are all on '
              f'{", ".join(sorted(set(placed.values())))}')
        per_host = {host.name: list(placed.values()).count(host.name)
                    for host in hosts.HOSTS}
        return (f'{MULTI_CREATE} servers ACTIVE from one ro root, one Cinder '
                f'attachment each, on both hosts ({per_host})')

    # 2
    def attach_modes(self):
        data = self.new_volume('data')
        # As `openstack server add volume SERVER VOLUME` finds it by name.
        named = self.cloud.member.get('cinder-api', self.cloud.volume_path(
            f'/detail?name={PREFIX}-data'))['volumes']
        check([volume['id'] for volume in named] == [data],
              f'the member looking {PREFIX}-data up by name finds '
              f'{[volume["id"] for volume in named]}')
        for server_id, mode in zip(self.servers, ('rw', 'ro', 'ro')):
            self.attach(server_id, data, mode)
        modes = [self.cloud.attached(server_id, data)['attach_mode']
                 for server_id in self.servers[:3]]
        check(modes == ['rw', 'ro', 'ro'], f'GET at 2.105 shows {modes}')
        return ('data volume found by name, attached rw, ro, ro; GET shows '
                'rw, ro, ro; ' + self.views())

    # 3
    def readonly_flag(self):
        server_id = self.servers[0]
        cases = (('flag-false', False, None, 'rw'),
                 ('flag-true', True, 'rw', 'ro'))
        for name, flag, mode, effective in cases:
            volume_id = self.new_volume(name)
            self.cloud.admin.call(
                'POST', 'cinder-api', f'/volumes/{volume_id}/action',
                {'os-update_readonly_flag': {'readonly': flag}}, expect=202)
            region = self.slot_region(volume_id)
            self.cloud.attach(server_id, volume_id, mode)
            self.expect(server_id, volume_id, effective, region,
                        requested=mode or 'rw')
        self.views([server_id], guest_restart='kept')
        return ('readonly flag False, no mode: writable; flag True, '
                'attached rw: read-only, down to the RBD image')

    # 4
    def hard_reboot(self):
        server_id = self.servers[1]
        self.cloud.action(server_id, {'reboot': {'type': 'HARD'}})
        self.cloud.wait_server(server_id)
        return 'hard reboot: ' + self.views([server_id],
                                            guest_restart='restarted')

    # 5
    def live_migration(self):
        server_id = self.servers[1]
        writable = self.new_volume('live-rw', multiattach=False)
        self.attach(server_id, writable, 'rw')
        self.views([server_id], guest_restart='kept')
        path = [self.cloud.host_of(server_id)]
        for _ in range(2):
            destination = self.other_host(server_id)
            self.cloud.action(server_id, {'os-migrateLive': {
                'host': destination, 'block_migration': 'auto'}},
                admin=True)
            self.cloud.wait_server(server_id, host=destination)
            self.placed(server_id, destination)
            self.views([server_id], guest_restart='kept')
            path.append(destination)
        return (f'ro root, ro data and rw volume live-migrated '
                f'{" -> ".join(path)}, checked on each host, the guest '
                'running throughout (same boot id)')

    # 6
    def cold_migration(self):
        server_id = self.servers[2]
        source = self.cloud.host_of(server_id)
        self.cloud.action(server_id, {'resize': {
            'flavorRef': self.cloud.flavor('mae.small')}})
        destination = self.other_host(server_id)
        self.cloud.wait_server(server_id, ('VERIFY_RESIZE',),
                               host=destination)
        self.cloud.action(server_id, {'confirmResize': None}, expect=204)
        self.cloud.wait_server(server_id, host=destination)
        self.placed(server_id, destination)
        self.views([server_id], guest_restart='restarted')
        self.cloud.action(server_id, {'resize': {
            'flavorRef': self.cloud.flavor('mae.tiny')}})
        self.cloud.wait_server(server_id, ('VERIFY_RESIZE',), host=source)
        self.views([server_id], guest_restart='restarted')
        self.cloud.action(server_id, {'revertResize': None})
        server = self.cloud.wait_server(server_id, host=destination)
        check(server['flavor']['original_name'] == 'mae.small',
              f'flavor after the revert: {server["flavor"]}')
        self.views([server_id], guest_restart='restarted')
        return (f'resized {source} -> {destination} and confirmed; resized '
                f'back to {source}, checked there, reverted to '
                f'{destination}; a new guest boot each time')

    # 7
    def swap(self):
        server_id = self.servers[3]
        volume_id = self.new_volume('swapped', multiattach=False)
        self.attach(server_id, volume_id, 'ro')
        self.views([server_id], guest_restart='kept')
        before = views.pool_of(self.cloud.rbd_image(volume_id))
        # Paused while QEMU copies the disk: QEMU 7.2 aborts on a guest
        # write to a read-only disk during a block mirror (the guest's
        # write below its kernel is one; see doc/source/cloud.rst).
        self.cloud.action(server_id, {'pause': None})
        self.cloud.wait_server(server_id, ('PAUSED',))
        self.cloud.retype(volume_id, deploy.OTHER_POOL_TYPE)
        self.cloud.action(server_id, {'unpause': None})
        self.cloud.wait_server(server_id)
        # The copy writes the new image; the guest's slot in it must
        # still be what the guest found (it never wrote it).
        self.written[volume_id][1] = self.written[volume_id][1] or 'copy'
        after = views.pool_of(self.cloud.rbd_image(volume_id))
        check(after != before, f'the volume is still in the pool {before}')
        mode = self.cloud.attached(server_id, volume_id)['attach_mode']
        check(mode == 'ro', f'after the swap Nova shows {mode}')
        records = [(record['instance'], record['attach_mode']) for record
                   in self.cloud.cinder_attachments(volume_id)]
        check(records == [(server_id, 'ro')],
              f"Cinder's attachments after the swap: {records}")
        return (f'ro volume of a paused server retyped, moved by Cinder '
                f'from pool {before} to {after} through Nova\'s swap volume; '
                'Nova and Cinder show ro; ' + self.views(
                    [server_id], guest_restart='kept'))

    # 8
    def reattach(self):
        changes = ((self.servers[1], self.volumes['live-rw'], 'ro'),
                   (self.servers[3], self.volumes['swapped'], 'rw'))
        for server_id, volume_id, mode in changes:
            self.detach(server_id, volume_id)
            self.attach(server_id, volume_id, mode)
        self.views([server_id for server_id, _, _ in changes],
                   guest_restart='kept')
        return ('detached and re-attached in the other mode: rw -> ro and '
                'ro -> rw, checked')

    # 9
    def shelve(self):
        server_id = self.servers[0]
        source = self.cloud.host_of(server_id)
        destination = self.other_host(server_id)
        self.cloud.action(server_id, {'shelve': None})
        self.cloud.wait_server(server_id, ('SHELVED_OFFLOADED',))
        self.cloud.action(server_id, {'unshelve': {'host': destination}},
                          admin=True)
        self.cloud.wait_server(server_id, host=destination)
        self.placed(server_id, destination)
        return (f'shelve-offloaded from {source}, unshelved onto '
                f'{destination}: ' + self.views([server_id],
                                                guest_restart='restarted'))

    # 10
    def evacuate(self):
        failed = hosts.by_name(self.cloud.host_of(self.servers[1]))
        target = next(host.name for host in hosts.HOSTS if host != failed)
        evacuated = [server for server, host in self.placements().items()
                     if host == failed.name]
        compute = services.compute(failed)
        compute.stop()
        # The host loses power: its guests die with it.
        for domain in hosts.domains(failed):
            hosts.virsh(failed, 'destroy', domain, check=False)
        # As an operator who fenced the host: forced down at once, not
        # after the missed heartbeats (service_down_time).
        self.cloud.force_down(failed.name, True)
        for server_id in evacuated:
            self.cloud.action(server_id, {'evacuate': {'host': target}},
                              admin=True, expect=200)
        for server_id in evacuated:
            # From 2.95 an evacuated server stays stopped.
            self.cloud.wait_server(server_id, ('SHUTOFF',), host=target)
            self.cloud.action(server_id, {'os-start': None})
        for server_id in evacuated:
            self.cloud.wait_server(server_id, host=target)
            self.placed(server_id, target)
        detail = self.views(evacuated, guest_restart='restarted')
        # The host is back: its nova-compute starts and removes what it
        # had of the evacuated servers (their migrations go from done to
        # completed); then the operator lifts the forced down.
        compute.start()
        api.wait(f'the evacuations from {failed.name} completed', lambda: {
            migration['status'] for migration in self.cloud.admin.get(
                'nova-api', '/os-migrations?migration_type=evacuation'
                f'&source_compute={failed.name}',
                microversion='2.80')['migrations']} == {'completed'},
            GUEST_SECONDS)
        self.cloud.force_down(failed.name, False)
        services.start(compute, timeout=180, admin=self.cloud.admin)
        left = [domain for domain in hosts.domains(failed, check=True)
                if any(self.report['servers'][server]['domain'] == domain
                       for server in evacuated)]
        check(not left, f'{failed.name} kept the domains {left} of the '
              'evacuated servers after its nova-compute came back')
        return (f'{failed.name} down (nova-compute stopped, guests '
                f'destroyed, forced down), {len(evacuated)} servers '
                f'evacuated to {target}: {detail}; {failed.name} back, its '
                'stale domains removed')

    # 11
    def refusals(self):
        server_id = self.servers[0]
        spare = self.new_volume('spare')
        # Bootable: a blank root is refused first for not being bootable.
        single = self.new_volume('single', multiattach=False,
                                 image=self.cloud.image())
        before = self.snapshot()
        results = []

        def refused(name, reply, message, status=400):
            # The refusal the series makes, not another one with the same
            # code (a locked server's 409, a schema error elsewhere).
            check(reply.status == status and message in reply.text,
                  f'{name}: expected {status} saying {message!r}, got '
                  f'{reply.status} {reply.text[:200]}')
            check(self.snapshot() == before,
                  f'{name}: something was left behind')
            results.append(f'{name} {reply.status}')

        refused('attach_mode at 2.104', self.cloud.attach(
            server_id, spare, 'ro', microversion=BEFORE, expect=None),
            "'attach_mode' was unexpected")
        refused('attach_mode "rx"', self.cloud.attach(
            server_id, spare, 'rx', expect=None),
            'Invalid input for field/attribute attach_mode')
        # A blank local disk, which Nova takes without the mode (an image
        # to local is refused for another reason without imageRef).
        local = self.cloud.create_servers(
            'local', [{'boot_index': -1, 'source_type': 'blank',
                       'destination_type': 'local', 'volume_size': 1,
                       'attach_mode': 'ro'}], expect=None)
        refused('local BDM with a mode', local,
                'Specifying an attach_mode is only supported')
        refused('multi-create from a non-multiattach volume',
                self.cloud.create_servers('single', [{
                    'boot_index': 0, 'uuid': single,
                    'source_type': 'volume', 'destination_type': 'volume',
                    'attach_mode': 'ro'}], count=2, expect=None),
                'only multiattach volumes can be shared')
        refused('rebuild reimaging the ro root', self.cloud.action(
            server_id, {'rebuild': {'imageRef': self.cloud.image()}},
            expect=None), 'the volume is attached read-only', status=409)
        return ', '.join(results)

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

    # 12
    def images(self):
        """Each volume's whole RBD image: unchanged unless something was
        allowed to write it.
        """
        volume_ids = list(self.written)
        digests = dict(zip(volume_ids, views.digests(
            [self.cloud.rbd_image(volume_id) for volume_id in volume_ids])))
        problems, names = [], {None: [], 'rw': [], 'copy': []}
        for volume_id, (made, written_by) in self.written.items():
            entry = self.report['volumes'][volume_id]
            entry.update(digest_end=digests[volume_id],
                         written_by=written_by,
                         changed=digests[volume_id] != made)
            names[written_by].append(entry['name'])
            problems += image_problems(entry['name'], volume_id,
                                       entry['changed'], written_by)
        check(not problems, '; '.join(problems))
        return (f'never attached rw, RBD image unchanged: '
                f'{", ".join(names[None])}; attached rw, changed: '
                f'{", ".join(names["rw"])}; copied by a migration only: '
                f'{", ".join(names["copy"]) or "none"}')

    # 13
    def read_only_prefilter(self):
        """With COMPUTE_VOLUME_READ_ONLY_ATTACH removed from one host's
        provider (as a host whose driver cannot give a guest a read-only
        disk), no server with a read-only volume is scheduled there, at
        create or on a move, while it still takes other servers.

        That host's nova-compute puts the trait back whenever it reads its
        provider from placement again: when its association refresh falls
        due ([compute] resource_provider_association_refresh, 300 s by
        default) and when a write of its own fails on a generation
        conflict, which the trait's removal causes for its next inventory
        update (its memory total, which libvirt reads from the host, is
        not constant on every machine). For the step it runs without
        either (provider_refresh()): no association refresh, no periodic
        resource audit, so the only writes left are those of a claim on
        the host. The checks that need the trait missing
        (prefilter_checks()) send nothing to that host; the trait is read
        after them, then the host takes an rw server
        (prefilter_takes_rw()), scheduled before its claim. They count
        only if the trait was still missing (nothing but this step
        removes it), and run again otherwise, a timeout among them (the
        scheduler may have taken the host back).
        """
        capable, incapable = (host.name for host in hosts.HOSTS)
        root = self.new_volume('prefilter', image=self.cloud.image())
        self.provider_refresh(incapable, False)
        try:
            return self.prefilter_attempts(root, capable, incapable)
        finally:
            self.provider_refresh(incapable, True)

    def prefilter_attempts(self, root, capable, incapable):
        """prefilter_checks() until it ran with the trait held, at most
        PREFILTER_ATTEMPTS times: a failure then, or its outcome with
        prefilter_takes_rw()'s.
        """
        for attempt in range(1, PREFILTER_ATTEMPTS + 1):
            self.cloud.set_trait(incapable, READ_ONLY_TRAIT, False)
            created, error, outcome = [], None, None
            try:
                try:
                    outcome = self.prefilter_checks(root, capable, incapable,
                                                    created)
                except (Failed, config.SeriesError) as failure:
                    error = failure
                held = READ_ONLY_TRAIT not in self.cloud.traits(incapable)
                if held and not error:
                    outcome += '; ' + self.prefilter_takes_rw(
                        root, incapable, created)
            finally:
                for server_id in created:
                    self.cloud.delete_server(server_id)
                self.cloud.wait_deleted(created)
                self.cloud.set_trait(incapable, READ_ONLY_TRAIT, True)
            if held:
                if error:
                    raise error
                return outcome
            say(f'attempt {attempt}: nova-compute of {incapable} put '
                f'{READ_ONLY_TRAIT} back meanwhile'
                + (f' ({error})' if error else '') + '; again')
        raise Failed(f'{READ_ONLY_TRAIT} came back during each of '
                     f'{PREFILTER_ATTEMPTS} attempts')

    def provider_refresh(self, host_name, refresh):
        """Restart `host_name`'s nova-compute with its configuration as
        `cloud up` writes it (`refresh` true), or without association
        refresh and periodic resource audit (configs.nova_compute());
        return once it has reported its state after the start, which it
        does when its start is over, its provider read from placement.
        """
        host = hosts.by_name(host_name)
        configs.write_nova_compute(host, refresh_provider=refresh)
        compute = services.compute(host)
        compute.stop()
        since = datetime.datetime.now(datetime.timezone.utc)
        services.start(compute, timeout=180, admin=self.cloud.admin)
        api.wait(f'nova-compute of {host_name} reported after its start',
                 lambda: compute.reports_as in services.reported_up(
                     self.cloud.admin, since=since), 240)

    def prefilter_boot(self, root, name, mode, created, host=None):
        reply = self.cloud.create_servers(name, [{
            'boot_index': 0, 'uuid': root, 'source_type': 'volume',
            'destination_type': 'volume', 'attach_mode': mode}], host=host)
        [server_id] = self.cloud.reserved(reply)
        created.append(server_id)
        return server_id

    def prefilter_checks(self, root, capable, incapable, created):
        """What the scheduler does without the trait on `incapable`: an
        ro server asked there refused, one asked nowhere on `capable`,
        its cold migration refused. None of it reaches `incapable`.
        """
        refused = self.prefilter_boot(root, 'prefilter-ro-asked', 'ro',
                                      created, host=incapable)
        server = self.cloud.wait_server(refused, ('ERROR',))
        check('No valid host' in server.get('fault', {}).get('message', ''),
              f'ro on {incapable}: {server["status"]}, fault '
              f'{server.get("fault")}')
        read_only = self.prefilter_boot(root, 'prefilter-ro', 'ro', created)
        host = self.cloud.wait_server(read_only)['OS-EXT-SRV-ATTR:host']
        check(host == capable, f'ro server on {host}')

        self.cloud.action(read_only, {'migrate': None}, admin=True)

        def migration_refused():
            summary, _ = faults.latest_action(self.cloud, read_only)
            if summary and 'conductor_migrate_server Error' in summary:
                return summary
        summary = api.wait('the migration refused by the scheduler',
                           migration_refused, BOOT_SECONDS)
        host = self.cloud.wait_server(read_only)['OS-EXT-SRV-ATTR:host']
        check(host == capable, f'ro server on {host} after the migration')
        return (f'{READ_ONLY_TRAIT} removed from {incapable}: ro asked on '
                f'{incapable} -> ERROR (No valid host); ro -> {capable}; '
                f'cold migration of the ro server refused ({summary}), '
                f'still on {capable}')

    def prefilter_takes_rw(self, root, incapable, created):
        """An rw server asked on `incapable` runs there."""
        read_write = self.prefilter_boot(root, 'prefilter-rw-asked', 'rw',
                                         created, host=incapable)
        host = self.cloud.wait_server(read_write)['OS-EXT-SRV-ATTR:host']
        check(host == incapable, f'rw server on {host}')
        return f'rw asked on {incapable} -> ACTIVE there'

    def run(self):
        self.cloud.delete_leftovers()
        steps = [
            (1, f'multi-create of {MULTI_CREATE} servers from one ro '
             'multiattach root volume, on both hosts', self.multi_create),
            (2, 'a multiattach volume attached rw, ro, ro; every '
             'attachment checked', self.attach_modes),
            (3, "Cinder's readonly flag", self.readonly_flag),
            (4, 'hard reboot', self.hard_reboot),
            (5, 'live migration to the other host and back',
             self.live_migration),
            (6, 'cold migration: resize to the other host, confirm; '
             'resize back, revert', self.cold_migration),
            (7, 'swap of an ro attachment (a retype Cinder migrates through '
             "Nova's swap volume)", self.swap),
            (8, 'detach and re-attach in the other mode', self.reattach),
            (9, 'shelve-offload, unshelve onto the other host', self.shelve),
            (10, 'evacuate from a failed host', self.evacuate),
            (11, 'refusals leave nothing behind', self.refusals),
            (12, "the volumes' RBD images from the host", self.images),
            (13, 'read-only prefilter: a host without '
             'COMPUTE_VOLUME_READ_ONLY_ATTACH gets no server with an ro '
             'volume', self.read_only_prefilter),
        ]
        for number, title, function in steps:
            if not self.step(number, title, function) and number == 1:
                break
        for number, (title, function) in enumerate(
                faults.FAULTS, len(steps) + 1):
            self.step(number, title, lambda: function(self))
        # Their servers are theirs, deleted by their own clean-ups.
        self.step(len(steps) + len(faults.FAULTS) + 1, 'upstream tempest: '
                  "the series' tests and the multiattach tests",
                  self.tempest, reconcile=False)
        self.step(len(steps) + len(faults.FAULTS) + 2, 'upstream '
                  "openstacksdk: functional tests of volume attachments",
                  self.sdk_functional, reconcile=False)
        return self.report

    def tempest(self):
        result = tempest.run(self.cloud.admin)
        self.report['tempest'] = result.report()
        check(result.passed and not result.failed,
              f'tempest: {result.failed} failed: '
              f'{", ".join(result.failures())}')
        return (f'tempest: {result.passed} passed, {result.failed} '
                f'failed, {result.skipped} skipped')

    def sdk_functional(self):
        result = sdk_functional.run()
        self.report['openstacksdk'] = result.report()
        check(result.passed and not result.failed and not result.skipped,
              f'openstacksdk: {result.failed} failed, {result.skipped} '
              f'skipped: {", ".join(result.failures() + list(result.skips))}')
        return (f'openstacksdk: {result.passed} passed, {result.failed} '
                f'failed, {result.skipped} skipped')


def print_report(report):
    process.say(f'{"step":>4} {"server":8} {"volume":8} {"host":13} '
                f'{"api":3} {"xml":5} {"qemu":5} {"kern":5} {"bypass":7} '
                f'{"rbd":5} guest write')
    for row in report['attachments']:
        process.say(f'{row["step"]!s:>4} {row["server_id"][:8]} '
                    f'{row["volume_id"][:8]} {row["host"]:13} '
                    f'{row["api_mode"] or "-":3} {row["xml_readonly"]!s:5} '
                    f'{row["qemu_ro"]!s:5} {row["guest_kernel_ro"]!s:5} '
                    f'{row["bypass_write"]:7} {row["rbd_changed"]!s:5} '
                    f'{row["guest_write"]}')
    for step in report['steps']:
        process.say(f'step {step["step"]!s:>4} '
                    f'{"passed" if step["passed"] else "FAILED":6} '
                    f'{step["seconds"]:6}s  {step["title"]}')
    tempest = report['tempest']
    if tempest:
        process.say(f'tempest: {tempest["passed"]} passed, '
                    f'{tempest["failed"]} failed, {tempest["skipped"]} '
                    f'skipped in {tempest["seconds"]}s')
        for test in tempest['failures']:
            process.say(f'  FAILED  {test}')
        for test, reason in sorted(tempest['skips'].items()):
            process.say(f'  SKIPPED {test}: {reason}')
    sdk = report.get('openstacksdk')
    if sdk:
        process.say(f'openstacksdk functional: {sdk["passed"]} passed, '
                    f'{sdk["failed"]} failed, {sdk["skipped"]} skipped in '
                    f'{sdk["seconds"]}s')


def run(up=True):
    """`cloud up` if needed (not if `up` is false: a cloud of the series
    known to run, as `cloud upgrade` leaves it), the scenario,
    report.json; the report.
    """
    pristine = sorted(part for part, release in releases.current().items()
                      if release == releases.PRISTINE)
    if pristine:
        raise config.SeriesError(
            f'the cloud runs the pristine releases on {", ".join(pristine)} '
            '(left by a `cloud upgrade` that did not finish): '
            '`tools/series cloud down` first')
    if up:
        deploy.up()
    started = time.monotonic()
    report = Scenario().run()
    report['seconds'] = round(time.monotonic() - started, 1)
    path = layout.directory() / 'report.json'
    deploy.write_json(path, report)
    print_report(report)
    failed = [step for step in report['steps'] if not step['passed']]
    say(f'{len(report["steps"]) - len(failed)} of {len(report["steps"])} '
        f'steps passed in {report["seconds"]}s; report in '
        f'{path.relative_to(config.ROOT)}')
    return report


def main():
    report = run()
    return 1 if any(not step['passed'] for step in report['steps']) else 0
