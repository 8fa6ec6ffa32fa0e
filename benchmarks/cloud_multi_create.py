"""Multi-create against serial creates, on the real two-host cloud.

N servers (default 6) booted from one read-only multiattach volume: once
in a single 2.105 request (min_count = max_count = N), once as N requests
one after the other, each waiting until every server is ACTIVE. Each
round starts with no server of the benchmark left and deletes its
servers after. Prints both wall times and their ratio (the target is at
most 0.5: one request schedules and builds the N servers together), and
per compute host how many servers it built and when its last one was
ACTIVE, and how long Cinder took for each attachment update there (from
cinder-api's log: the update holds a lock on the volume and the
connector's host), and how busy the machine's CPUs were.

With --api-processes P, nova-api and cinder-api are restarted with P
uWSGI worker processes for the run (and with one after it): whether one
API process or Cinder's per-host lock orders the work.

Run with: python3 benchmarks/cloud_multi_create.py [N] [--api-processes P]
(`tools/series cloud up` first; the cloud stays as it was.)
"""

import argparse
from pathlib import Path
import re
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from series.cloud import client  # noqa: E402
from series.cloud import configs  # noqa: E402
from series.cloud import hosts  # noqa: E402
from series.cloud import layout  # noqa: E402
from series.cloud import rest  # noqa: E402
from series.cloud import services  # noqa: E402

API_SERVICES = ('nova-api', 'cinder-api')
# uWSGI's log line of a request cinder-api answered: path and the time it
# took.
REQUEST = re.compile(r'PUT /v3/(?:[0-9a-f]+/)?attachments/(?P<id>[0-9a-f-]+)'
                     r' => generated \d+ bytes in (?P<msecs>\d+) msecs '
                     r'\(HTTP/1\.1 200\)')


def cpu_times():
    """(busy, total) clock ticks of all the machine's CPUs so far."""
    fields = [int(value) for value in
              Path('/proc/stat').read_text().split('\n')[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def busy_since(start):
    busy, total = cpu_times()
    return (busy - start[0]) / max(total - start[1], 1)


def create(cloud, root, name, count):
    bdm = [{'boot_index': 0, 'uuid': root, 'source_type': 'volume',
            'destination_type': 'volume', 'attach_mode': 'ro'}]
    return cloud.reserved(cloud.create_servers(name, bdm, count=count))


def wait_active(cloud, server_ids, started):
    """{server: (host, seconds from `started` until it was ACTIVE)}."""
    done = {}

    def probe():
        for server_id in server_ids:
            if server_id not in done:
                server = cloud.server(server_id)
                if server['status'] == 'ERROR':
                    raise client.Failed(f'{server_id} went to ERROR')
                if (server['status'] == 'ACTIVE' and
                        not server['OS-EXT-STS:task_state']):
                    done[server_id] = (server['OS-EXT-SRV-ATTR:host'],
                                       time.monotonic() - started)
        return len(done) == len(server_ids)
    rest.wait('benchmark servers ACTIVE', probe, 600, interval=0.5)
    return done


def delete(cloud, server_ids):
    for server_id in server_ids:
        cloud.delete_server(server_id)
    cloud.wait_deleted(server_ids)


def attachment_updates(cloud, root, placed, log_start):
    """{host: [seconds of each attachment update]} of the volume's
    attachments to the servers `placed` ({server: (host, ...)}), from
    cinder-api's log since `log_start` (bytes).
    """
    host_of = {record['id']: placed[record['instance']][0]
               for record in cloud.cinder_attachments(root)
               if record['instance'] in placed}
    with open(layout.log('cinder-api'), 'rb') as log:
        log.seek(log_start)
        text = log.read().decode(errors='replace')
    per_host = {}
    for found in REQUEST.finditer(text):
        if found['id'] in host_of:
            per_host.setdefault(host_of[found['id']], []).append(
                int(found['msecs']) / 1000)
    return per_host


def per_host_table(placed, updates):
    lines = []
    for host in hosts.HOSTS:
        times = [seconds for name, seconds in placed.values()
                 if name == host.name]
        took = updates.get(host.name, [])
        lines.append(
            f'    {host.name}: {len(times)} servers, last ACTIVE at '
            f'{max(times, default=0):5.1f} s; attachment updates '
            + (f'{len(took)}, {min(took):.2f}-{max(took):.2f} s each, '
               f'{sum(took):.1f} s in all' if took else 'not in the log'))
    return lines


def restart_apis(processes):
    admin = client.Cloud().admin
    for name in API_SERVICES:
        configs.write_uwsgi(name, processes)
        service = services.by_name(name)
        service.stop()
        services.start(service, admin=admin)


def run(count):
    cloud = client.Cloud()
    root = cloud.create_volume('bench-root', image=cloud.image())['id']
    try:
        log_start = layout.log('cinder-api').stat().st_size
        cpu = cpu_times()
        started = time.monotonic()
        servers = create(cloud, root, 'bench-multi', count)
        placed = wait_active(cloud, servers, started)
        multi = time.monotonic() - started
        multi_busy = busy_since(cpu)
        multi_updates = attachment_updates(cloud, root, placed, log_start)
        delete(cloud, servers)
        log_start = layout.log('cinder-api').stat().st_size
        cpu = cpu_times()
        started = time.monotonic()
        serial_placed = {}
        for number in range(count):
            servers = create(cloud, root, f'bench-serial-{number}', 1)
            serial_placed.update(wait_active(cloud, servers, started))
        serial = time.monotonic() - started
        serial_busy = busy_since(cpu)
        serial_updates = attachment_updates(cloud, root, serial_placed,
                                            log_start)
        delete(cloud, list(serial_placed))
    finally:
        cloud.member.call('DELETE', 'cinder-api',
                          cloud.volume_path(f'/{root}'), expect=(202, 404))
    print(f'{count} servers from one ro multiattach volume, until all '
          'ACTIVE:')
    print(f'  one multi-create request: {multi:7.1f} s (CPUs '
          f'{multi_busy:.0%} busy)')
    print('\n'.join(per_host_table(placed, multi_updates)))
    print(f'  {count} serial requests:      {serial:7.1f} s (CPUs '
          f'{serial_busy:.0%} busy)')
    print('\n'.join(per_host_table(serial_placed, serial_updates)))
    print(f'  ratio: {multi / serial:.2f} (target <= 0.5)')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('count', nargs='?', type=int, default=6)
    parser.add_argument('--api-processes', type=int, default=1)
    args = parser.parse_args()
    if args.api_processes != 1:
        restart_apis(args.api_processes)
    try:
        print(f'nova-api and cinder-api with {args.api_processes} uWSGI '
              'process(es)')
        run(args.count)
    finally:
        if args.api_processes != 1:
            restart_apis(1)


if __name__ == '__main__':
    main()
