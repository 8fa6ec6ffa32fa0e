"""Multi-create against serial creates, on the real cloud.

N servers (default 6) booted from one read-only multiattach volume: once
in a single 2.105 request (min_count = max_count = N), once as N requests
one after the other, each waiting until every server is ACTIVE. Each
round starts with no server of the benchmark left and deletes its
servers after. Prints both wall times and their ratio (the target is at
most 0.5: one request schedules and builds the N servers together).

Run with: python3 benchmarks/cloud_multi_create.py [N]
(`tools/series cloud up` first; the cloud stays as it was.)
"""

from pathlib import Path
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from series.cloud import api  # noqa: E402
from series.cloud import scenario  # noqa: E402


def create(cloud, root, name, count):
    bdm = [{'boot_index': 0, 'uuid': root, 'source_type': 'volume',
            'destination_type': 'volume', 'attach_mode': 'ro'}]
    reply = cloud.create_servers(name, bdm, count=count)
    return [server['id'] for server in cloud.servers(
        f'reservation_id={reply.body["reservation_id"]}')]


def delete(cloud, server_ids):
    for server_id in server_ids:
        cloud.member.call('DELETE', 'nova-api', f'/servers/{server_id}',
                          expect=(204, 404))
    api.wait('benchmark servers deleted', lambda: not any(
        server['id'] in server_ids for server in cloud.servers()), 300)


def main(count):
    cloud = scenario.Cloud()
    root = cloud.create_volume('bench-root', image=cloud.image())['id']
    try:
        started = time.monotonic()
        servers = create(cloud, root, 'bench-multi', count)
        for server_id in servers:
            cloud.wait_server(server_id)
        multi = time.monotonic() - started
        delete(cloud, servers)
        started = time.monotonic()
        servers = []
        for number in range(count):
            servers += create(cloud, root, f'bench-serial-{number}', 1)
            cloud.wait_server(servers[-1])
        serial = time.monotonic() - started
        delete(cloud, servers)
    finally:
        cloud.member.call('DELETE', 'cinder-api',
                          cloud.volume_path(f'/{root}'), expect=(202, 404))
    print(f'{count} servers from one ro multiattach volume, until all '
          'ACTIVE:')
    print(f'  one multi-create request: {multi:7.1f} s')
    print(f'  {count} serial requests:      {serial:7.1f} s')
    print(f'  ratio: {multi / serial:.2f} (target <= 0.5)')


if __name__ == '__main__':
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
