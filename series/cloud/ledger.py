"""What the scenario made, and what the cloud holds of it.

The ledger keeps every attachment the scenario made (server, volume, the
mode of its disk, the mode Nova shows) and the host of every server,
changed only by the scenario's own requests. observe() reads the same
from Nova (2.105), from Cinder's attachment records and the volumes'
attachments, and from the libvirt domains of both hosts; compare() says
what disagrees: an attachment missing, extra, duplicated or in another
mode, a record not attached (or, for a shelved-offloaded server, not
reserved) or on another host, a server elsewhere than it was put, a
domain on the wrong host or of no server of the scenario.
"""

import collections

from series.cloud import hosts


class Ledger:

    def __init__(self):
        # (server, volume) -> 'ro' or 'rw': what the guest's disk must be.
        self.modes = {}
        # (server, volume) -> the mode Nova shows (the one asked for).
        self.requested = {}
        # server -> the host the scenario put it on (or the scheduler
        # chose, as Nova said once the server was ACTIVE); None while it
        # is shelved-offloaded.
        self.hosts = {}
        # server -> the mode Cinder records for the reservations that keep
        # its volumes while it is shelved-offloaded.
        self.offloaded = {}
        # (server, volume) -> the mode Cinder records of the attachment
        # where it is not the mode of the guest's disk.
        self.recorded = {}

    def attach(self, server_id, volume_id, mode, requested):
        self.modes[server_id, volume_id] = mode
        self.requested[server_id, volume_id] = requested

    def detach(self, server_id, volume_id):
        del self.modes[server_id, volume_id]
        del self.requested[server_id, volume_id]
        self.recorded.pop((server_id, volume_id), None)

    def records(self, server_id, record_mode):
        """Cinder records each attachment of the server as `record_mode`
        (None: as the mode of its disk).
        """
        for key in [key for key in self.modes if key[0] == server_id]:
            if record_mode is None:
                self.recorded.pop(key, None)
            else:
                self.recorded[key] = record_mode

    def place(self, server_id, host_name):
        self.hosts[server_id] = host_name
        self.offloaded.pop(server_id, None)

    def offload(self, server_id, record_mode):
        """The server is shelved-offloaded: no host, no domain, each of
        its volumes kept by a reservation (no connection) that Cinder
        records as `record_mode`, the mode Nova gave attachment_create
        ('null' where it gave none).
        """
        self.hosts[server_id] = None
        self.offloaded[server_id] = record_mode

    def remove(self, server_id):
        for key in [key for key in self.modes if key[0] == server_id]:
            self.detach(*key)
        self.hosts.pop(server_id, None)
        self.offloaded.pop(server_id, None)

    def mode(self, server_id, volume_id):
        return self.modes.get((server_id, volume_id))

    def expected(self):
        """What must exist, as report.json shows it."""
        return {'servers': dict(sorted(self.hosts.items())),
                'attachments': [
                    {'server': server_id, 'volume': volume_id,
                     'mode': mode,
                     'api_mode': self.requested[server_id, volume_id],
                     'host': self.hosts.get(server_id),
                     **self.record(server_id, volume_id, mode)}
                    for (server_id, volume_id), mode in sorted(
                        self.modes.items())]}

    def record(self, server_id, volume_id, mode):
        """What Cinder's attachment record of the server's volume must
        say: attached in the guest's mode (or the one it records), or
        reserved while offloaded.
        """
        if server_id in self.offloaded:
            return {'status': 'reserved',
                    'record_mode': self.offloaded[server_id]}
        return {'status': 'attached',
                'record_mode': self.recorded.get((server_id, volume_id),
                                                 mode)}


def observe(cloud, server_ids, volume_ids):
    """What Nova, Cinder and libvirt hold of the servers and volumes."""
    seen = {'servers': {}, 'nova': [], 'cinder': [], 'domains': {}}
    domain_of = {}
    for server_id in server_ids:
        server = cloud.server(server_id)
        seen['servers'][server_id] = server['OS-EXT-SRV-ATTR:host']
        domain_of[server['OS-EXT-SRV-ATTR:instance_name']] = server_id
        seen['nova'] += [
            {'server': server_id, 'volume': attachment['volumeId'],
             'api_mode': attachment.get('attach_mode')}
            for attachment in cloud.attachments(server_id)]
    for volume_id in volume_ids:
        host_of = {attachment['attachment_id']: attachment.get('host_name')
                   for attachment in cloud.volume(volume_id, admin=True)[
                       'attachments']}
        seen['cinder'] += [
            {'server': record['instance'], 'volume': volume_id,
             'mode': record.get('attach_mode'), 'status': record['status'],
             'host': host_of.get(record['id'])}
            for record in cloud.cinder_attachments(volume_id)]
    for host in hosts.HOSTS:
        seen['domains'][host.name] = sorted(
            domain_of.get(domain, f'domain {domain}')
            for domain in hosts.domains(host, check=True))
    return seen


def compare(expected, seen):
    """What in `seen` (observe()) disagrees with `expected`
    (Ledger.expected()): a list of problems, empty when all agree.
    """
    problems = []
    servers = expected['servers']
    wanted = {(entry['server'], entry['volume']): entry
              for entry in expected['attachments']}
    for server_id, host in servers.items():
        if seen['servers'].get(server_id) != host:
            problems.append(f'server {server_id} is on '
                            f'{seen["servers"].get(server_id)}, not {host}')
        on = [name for name, domains in seen['domains'].items()
              if server_id in domains]
        if on != ([host] if host else []):
            problems.append(f'the domain of {server_id} is on '
                            f'{on or "no host"}, not {host or "none"}')
    for name, domains in seen['domains'].items():
        for domain in domains:
            if domain not in servers:
                problems.append(f'{name} runs {domain}, of no server of the '
                                'scenario')
    problems += _against(
        'Nova', seen['nova'], wanted,
        lambda row, entry: [f'shows {row["api_mode"]}, not '
                            f'{entry["api_mode"]}']
        if row['api_mode'] != entry['api_mode'] else [])

    def cinder_problems(row, entry):
        wrong = []
        if row['mode'] != entry['record_mode']:
            wrong.append(f'records {row["mode"]}, not '
                         f'{entry["record_mode"]}')
        if row['status'] != entry['status']:
            wrong.append(f'is {row["status"]}, not {entry["status"]}')
        if row['host'] != entry['host']:
            wrong.append(f'is attached on {row["host"]}, not '
                         f'{entry["host"]}')
        return wrong
    problems += _against('Cinder', seen['cinder'], wanted, cinder_problems)
    return problems


def _against(source, rows, wanted, row_problems):
    """The problems of `source`'s rows against the wanted attachments:
    each wanted one exactly once and as row_problems() wants it, no other.
    """
    problems = []
    counts = collections.Counter((row['server'], row['volume'])
                                 for row in rows)
    for key in wanted:
        if not counts[key]:
            problems.append(f'{source} has no attachment of {key[1]} to '
                            f'{key[0]}')
    for key, count in counts.items():
        if key not in wanted:
            problems.append(f'{source} has an attachment of {key[1]} to '
                            f'{key[0]} that the scenario did not make')
        elif count > 1:
            problems.append(f'{source} has {count} attachments of {key[1]} '
                            f'to {key[0]}')
    for row in rows:
        key = (row['server'], row['volume'])
        if key in wanted:
            problems += [f'{source}: the attachment of {key[1]} to {key[0]} '
                         f'{wrong}'
                         for wrong in row_problems(row, wanted[key])]
    return problems
