"""Every attachment of a run's servers observed on the host that runs
each server, from five places (the API, the libvirt XML, QEMU, the
guest, the volume's RBD image), each observation a row of the report,
and what in them disagrees with what the tracker expects.
"""

from series.cloud import client
from series.cloud.client import check
from series.cloud import guest
from series.cloud import hosts
from series.cloud import probes
from series.cloud import rest
from series.cloud.tracker import SIZE_GIB
from series import config

GUEST_SECONDS = 240
POLL_SECONDS = 2


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


def kernel_fault_problems(seen_before, console):
    """The guest kernel's faults on `console` that the last check had not
    seen (`seen_before`, a set of their lines): a guest whose kernel
    faulted vouches for nothing it reports after.
    """
    new = [line for line in guest.kernel_faults(console)
           if line not in seen_before]
    return [f'the guest kernel faulted: {"; ".join(new[:3])}'] if new else []


def image_problems(name, volume_id, changed, written_by):
    """What the rbd-images step finds wrong with a volume's whole RBD image:
    `written_by` is 'rw' (a guest wrote it: it must have changed), 'copy'
    (a migration copied it: it may have) or None (nothing may have).
    """
    if written_by is None and changed:
        return [f'{name} ({volume_id}) changed although never attached rw']
    if written_by == 'rw' and not changed:
        return [f'{name} ({volume_id}) unchanged although a guest had it '
                'rw']
    return []


def check_views(tracker, server_ids=None, guest_restart=None):
    """Observe every attachment of the servers (the tracker's, without
    `server_ids`); fail unless all agree with the mode asked for, each
    guest's boot id with `guest_restart` (boot_problems()) and no guest
    kernel faulted since the last check (kernel_fault_problems()).
    """
    server_ids = server_ids or tracker.servers
    reports = fresh_reports(tracker, server_ids)
    consoles = {server_id: tracker.cloud.console(server_id)
                for server_id in server_ids}
    # Rounds left out because their bypass write logged no result,
    # with insmod's error (guest.latest()).
    for server_id in server_ids:
        missing = guest.missing(consoles[server_id])
        if missing:
            tracker.report.bypass_missing.setdefault(
                server_id, {}).update(missing)
    problems = []
    for server_id in server_ids:
        seen = tracker.kernel_faults.setdefault(server_id, set())
        problems += [f'{server_id}: {problem}' for problem in
                     kernel_fault_problems(seen, consoles[server_id])]
        seen.update(guest.kernel_faults(consoles[server_id]))
        problems += record_server(tracker, server_id, reports[server_id])
        # guest.latest(): the reports of the guest's latest boot.
        boot = next(iter(reports[server_id].values())).boot
        problems += [f'{server_id}: {problem}' for problem in
                     boot_problems(tracker.boots.get(server_id), boot,
                                   guest_restart)]
        tracker.boots[server_id] = boot
    check(not problems, '; '.join(problems))
    hosts_seen = sorted({tracker.report.servers[server]['host']
                         for server in server_ids})
    return (f'{len(server_ids)} servers on {", ".join(hosts_seen)}: '
            'API, XML, QEMU, guest kernel, write below it and RBD '
            'agree')


def wanted_serials(cloud, server_id):
    return {attachment['volumeId'][:guest.SERIAL_CHARS]
            for attachment in cloud.attachments(server_id)}


def fresh_reports(tracker, server_ids):
    """{server: {serial: guest.Report}} of rounds the guests began
    after this call: the console lines already there are noted, the
    first new round of each guest marks the time, and only later
    rounds count (a round printed after the mark began after it).
    """
    cloud = tracker.cloud
    seen = {server: {(line.boot, line.seq) for line in
                     guest.reports(cloud.console(server))}
            for server in server_ids}
    wanted = {server: wanted_serials(cloud, server)
              for server in server_ids}
    marks, found = {}, {}

    def probe():
        for server in server_ids:
            if server in found:
                continue
            console = cloud.console(server)
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
    try:
        rest.wait(f'fresh guest reports of {len(server_ids)} servers',
                  probe, GUEST_SECONDS, interval=POLL_SECONDS)
    except config.SeriesError as error:
        raise config.SeriesError('; '.join(
            [str(error)] + [f'{server}: {guest.silence(cloud.console(server))}'
                            for server in server_ids
                            if server not in found])) from None
    return found


def record_server(tracker, server_id, in_guest):
    """Record the server and a row per attachment in the report; the
    problems of its attachments, an attachment the ledger does not hold
    being one.
    """
    cloud = tracker.cloud
    server = cloud.server(server_id)
    host = hosts.by_name(server['OS-EXT-SRV-ATTR:host'])
    domain = server['OS-EXT-SRV-ATTR:instance_name']
    slot = client.slot(server)
    tracker.report.servers[server_id] = {
        'host': host.name, 'domain': domain, 'slot': slot,
        'domain_uuid': hosts.virsh(host, 'domuuid', domain).stdout.strip()}
    disks = probes.domain_disks(host, domain)
    attachments = cloud.attachments(server_id)
    reads = probes.slots([(cloud.rbd_image(attachment['volumeId']),
                          SIZE_GIB, slot) for attachment in attachments])
    problems = []
    for attachment, read in zip(attachments, reads):
        volume_id = attachment['volumeId']
        device, xml_ro, qemu_ro = disks.get(volume_id, (None,) * 3)
        report = in_guest[volume_id[:guest.SERIAL_CHARS]]
        baseline = tracker.baseline.get((server_id, volume_id))
        write = report.write + (f': {report.error}' if report.error
                                else '')
        row = {'step': tracker.current_step, 'server_id': server_id,
               'volume_id': volume_id, 'host': host.name,
               'device': attachment['device'],
               'api_mode': attachment.get('attach_mode'),
               'xml_readonly': xml_ro, 'qemu_ro': qemu_ro,
               'guest_kernel_ro': report.ro, 'guest_write': write,
               'bypass_write': report.bypass_text,
               'rbd_changed': (None if baseline is None
                               else read != baseline),
               'rbd_by_guest': read.startswith(guest.marker(server_id)),
               'guest_round': f'{report.boot}/{report.seq}'}
        tracker.report.attachments.append(row)
        mode = tracker.ledger.mode(server_id, volume_id)
        if mode is None:
            problems.append(f'{volume_id} on {server_id} ({host.name}): not '
                            'in the ledger, nothing to judge it against')
            continue
        expected = mode == 'ro'
        wrong = expected_problems(row, expected)
        if report.sector != guest.slot_sector(slot, SIZE_GIB << 30):
            wrong.append(f'the guest wrote sector {report.sector}, not '
                         f'its slot {slot}')
        if row['api_mode'] != tracker.ledger.requested[server_id,
                                                       volume_id]:
            wrong.append(f'api_mode={row["api_mode"]}')
        if wrong:
            problems.append(
                f'{volume_id} on {server_id} ({host.name}), expected '
                f'{"ro" if expected else "rw"}: {", ".join(wrong)}')
    return problems
