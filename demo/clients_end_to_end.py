"""openstacksdk and the openstack CLI, with their series, against the demo.

Run with the python-openstackclient virtualenv (it holds both patched
clients) while `tools/series demo --keep-running` runs; it reads the
deployment from .work/demo/endpoint.json (or the path given). Each check
prints one line, "ok: <what> => <observed>" or "FAILED: ..."; the exit
code is 1 if any check failed.

The refusals below 2.105 need a cloud whose maximum is 2.104: a small
proxy in front of the demo forwards every request unchanged but reports
2.104 in the version document, and records what reaches it, so that a
request sent without its mode would be seen.
"""

import argparse
import http.server
import json
import os
from pathlib import Path
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from xml.etree import ElementTree

import openstack
from openstack import exceptions

WAIT_SECONDS = 60


class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, what, ok, observed):
        print(f'{"ok" if ok else "FAILED"}: {what} => {observed}',
              flush=True)
        self.failed += not ok


def wait_for(predicate, seconds=WAIT_SECONDS):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    return predicate()


class OlderCloud(http.server.ThreadingHTTPServer):
    """Forwards to `upstream`, reporting `maximum` as the microversion."""

    def __init__(self, upstream, maximum):
        self.upstream = upstream.rstrip('/')
        self.maximum = maximum
        self.requests = []
        super().__init__(('127.0.0.1', 0), OlderCloudHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def root(self):
        return f'http://127.0.0.1:{self.server_address[1]}'


class OlderCloudHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def forward(self):
        server = self.server
        server.requests.append((self.command, self.path))
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ('host', 'content-length')}
        request = urllib.request.Request(server.upstream + self.path,
                                         data=body, headers=headers,
                                         method=self.command)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, answer = response.status, response.read()
                reply_headers = response.headers
        except urllib.error.HTTPError as error:
            status, answer, reply_headers = error.code, error.read(), \
                error.headers
        if (self.command == 'GET' and status == 200 and
                self.path.rstrip('/') in ('', '/v2.1')):
            answer = self.older(json.loads(answer))
        self.send_response(status)
        for name, value in reply_headers.items():
            if name.lower() not in ('content-length', 'transfer-encoding',
                                    'connection', 'date', 'server'):
                self.send_header(name, value)
        self.send_header('Content-Length', str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def older(self, document):
        versions = document.get('versions') or [document['version']]
        for version in versions:
            if version.get('version'):
                version['version'] = self.server.maximum
            for link in version.get('links', []):
                link['href'] = link['href'].replace(self.server.upstream,
                                                    self.server.root)
        return json.dumps(document).encode()

    do_GET = do_POST = do_PUT = do_DELETE = forward


def connect(endpoint, volume_endpoint, token):
    return openstack.connect(
        load_yaml_config=False, load_envvars=False,
        auth_type='admin_token',
        auth={'endpoint': endpoint, 'token': token},
        compute_endpoint_override=endpoint,
        block_storage_endpoint_override=volume_endpoint)


def guest_disk_readonly(info, server_id, device):
    """<readonly/> on the guest's disk `device` (/dev/vdc), None if none."""
    path = Path(info['guest_disks']) / f'{server_id}.xml'
    if not device or not path.exists():
        return None
    for disk in ElementTree.fromstring(path.read_bytes()).iter('disk'):
        target = disk.find('target')
        if target is not None and \
                target.get('dev') == device.removeprefix('/dev/'):
            return disk.find('readonly') is not None
    return None


def attachment(conn, server_id, volume_id):
    try:
        return conn.compute.get_volume_attachment(server_id, volume_id)
    except exceptions.NotFoundException:
        return None


def sdk_checks(checks, info):
    conn = connect(info['endpoint'], info['volume_endpoint'], info['TOKEN'])
    server_1, server_2 = info['servers'][:2]
    spare_1 = info['volumes']['spare-1']

    created = conn.compute.create_volume_attachment(server_1, spare_1,
                                                    attach_mode='ro')
    found = wait_for(lambda: attachment(conn, server_1, spare_1))
    checks.check('sdk: create_volume_attachment(attach_mode="ro"), then GET',
                 created.attach_mode == 'ro' and found is not None and
                 found.attach_mode == 'ro',
                 f'sent {created.attach_mode}, GET gives '
                 f'{found and found.attach_mode}')
    device = found and found.device
    readonly = wait_for(
        lambda: guest_disk_readonly(info, server_1, device))
    checks.check('sdk: the guest disk of that attachment is <readonly/>',
                 readonly is True, f'{device}: readonly {readonly}')

    attached = conn.attach_volume(conn.compute.get_server(server_2),
                                  conn.block_storage.get_volume(spare_1),
                                  attach_mode='ro', timeout=WAIT_SECONDS)
    checks.check('sdk: attach_volume(attach_mode="ro") of the in-use '
                 'multiattach volume to another server, waited for',
                 attached.attach_mode == 'ro' and bool(attached.device),
                 f'mode {attached.attach_mode}, device {attached.device}')

    root = info['volumes']['shared-root']
    created = conn.compute.create_server(
        name='sdk-ro', flavor_id=info['flavors']['demo.small'],
        networks='none', block_device_mapping=[{
            'uuid': root, 'source_type': 'volume',
            'destination_type': 'volume', 'boot_index': 0,
            'attach_mode': 'ro'}])

    def settled():
        status = conn.compute.get_server(created.id).status
        return status if status in ('ACTIVE', 'ERROR') else None
    status = wait_for(settled)
    found = attachment(conn, created.id, root)
    checks.check('sdk: create_server with block_device_mapping attach_mode '
                 '"ro" from the shared root',
                 status == 'ACTIVE' and found is not None and
                 found.attach_mode == 'ro',
                 f'status {status}, root attached '
                 f'{found and found.attach_mode}')

    modes = {a.volume_id: a.attach_mode
             for a in conn.compute.volume_attachments(server_1)}
    checks.check('sdk: volume_attachments() returns every mode',
                 bool(modes) and None not in modes.values() and
                 modes.get(spare_1) == 'ro', f'{modes}')

    sdk_older_cloud_checks(checks, info, conn)


def sdk_older_cloud_checks(checks, info, conn):
    """openstacksdk against a cloud whose maximum is 2.104."""
    server_1 = info['servers'][0]
    spare_3 = info['volumes']['spare-3']
    older = OlderCloud(info['endpoint'].removesuffix('/v2.1'), '2.104')
    try:
        old_conn = connect(older.root + '/v2.1', info['volume_endpoint'],
                           info['TOKEN'])
        try:
            old_conn.compute.create_volume_attachment(server_1, spare_3,
                                                      attach_mode='ro')
            refused = 'attached'
        except exceptions.NotSupported as error:
            refused = str(error)
        posts = [r for r in older.requests if r[0] == 'POST']
        checks.check('sdk: a 2.104 cloud: create_volume_attachment('
                     'attach_mode="ro") raises, sends nothing',
                     '2.105' in refused and not posts and
                     attachment(conn, server_1, spare_3) is None,
                     f'{refused!r}; POSTs that reached the cloud: {posts}')
        try:
            old_conn.compute.create_server(
                name='refused', flavor_id=info['flavors']['demo.small'],
                networks='none', block_device_mapping=[{
                    'uuid': spare_3, 'source_type': 'volume',
                    'destination_type': 'volume', 'boot_index': 0,
                    'attach_mode': 'ro'}])
            refused = 'created'
        except exceptions.NotSupported as error:
            refused = str(error)
        posts = [r for r in older.requests if r[0] == 'POST']
        checks.check('sdk: a 2.104 cloud: create_server with an attach_mode '
                     'raises, sends nothing',
                     '2.105' in refused and not posts,
                     f'{refused!r}; POSTs that reached the cloud: {posts}')
    finally:
        older.shutdown()
        older.server_close()


def cli(info, *args):
    """The openstack CLI."""
    openstack_cli = Path(sys.executable).with_name('openstack')
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=info['clouds_yaml'])
    env = {k: v for k, v in env.items()
           if not k.startswith('OS_') or k == 'OS_CLIENT_CONFIG_FILE'}
    return subprocess.run([str(openstack_cli), '--os-cloud', 'demo', *args],
                          env=env, text=True, capture_output=True)


def cli_checks(checks, info):
    server_3 = info['servers'][2]
    spare_2, spare_3 = info['volumes']['spare-2'], info['volumes']['spare-3']

    added = cli(info, '--os-compute-api-version', '2.105', 'server', 'add',
                'volume', '--attach-mode', 'ro', '-f', 'json', server_3,
                spare_2)
    shown = json.loads(added.stdout) if added.returncode == 0 else {}
    # Accepted (202 from 2.101, no body): the mode is read back below, as
    # Nova recorded it, never echoed from the request.
    checks.check('cli: server add volume --attach-mode ro',
                 added.returncode == 0 and 'Attach Mode' not in shown,
                 f'exit {added.returncode}, {shown or added.stderr.strip()}')

    def listed():
        out = cli(info, '--os-compute-api-version', '2.105', 'server',
                  'volume', 'list', '-f', 'json', server_3)
        rows = json.loads(out.stdout) if out.returncode == 0 else []
        return {row['Volume ID']: row.get('Attach Mode') for row in rows
                if row['Volume ID'] == spare_2 and row.get('Device')}
    rows = wait_for(listed)
    checks.check('cli: server volume list shows the Attach Mode column',
                 rows == {spare_2: 'ro'}, f'{rows}')

    # The HPC case: more servers booted from the shared read-only root.
    root = info['volumes']['shared-root']
    created = cli(info, '--os-compute-api-version', '2.105', 'server',
                  'create', '--flavor', 'demo.small', '--nic', 'none',
                  '--min', '2', '--max', '2', '--block-device',
                  f'uuid={root},source_type=volume,destination_type=volume,'
                  'boot_index=0,attach_mode=ro', '-f', 'json', 'cli-multi')
    conn = connect(info['endpoint'], info['volume_endpoint'], info['TOKEN'])

    def booted():
        servers = [s for s in conn.compute.servers(name='^cli-multi')]
        if len(servers) == 2 and all(s.status == 'ACTIVE' for s in servers):
            return servers
        return None
    servers = wait_for(booted) or []
    modes = [attachment(conn, server.id, root) for server in servers]
    checks.check('cli: server create --min 2 --max 2 --block-device '
                 '...,attach_mode=ro from the shared root volume',
                 created.returncode == 0 and len(servers) == 2 and
                 all(a is not None and a.attach_mode == 'ro' for a in modes),
                 f'exit {created.returncode} {created.stderr.strip()}; '
                 f'{[(s.name, s.status) for s in servers]}, modes '
                 f'{[a and a.attach_mode for a in modes]}')

    refused = cli(info, '--os-compute-api-version', '2.104', 'server', 'add',
                  'volume', '--attach-mode', 'ro', server_3, spare_3)
    checks.check('cli: --attach-mode below 2.105 is an error, nothing '
                 'attached',
                 refused.returncode != 0 and '2.105' in refused.stderr and
                 attachment(conn, server_3, spare_3) is None,
                 f'exit {refused.returncode}: {refused.stderr.strip()}')

    refused = cli(info, '--os-compute-api-version', '2.104', 'server',
                  'create', '--flavor', 'demo.small', '--nic', 'none',
                  '--block-device',
                  f'uuid={root},source_type=volume,destination_type=volume,'
                  'boot_index=0,attach_mode=ro', 'cli-refused')
    left = list(conn.compute.servers(name='^cli-refused'))
    checks.check('cli: --block-device attach_mode below 2.105 is an error, '
                 'no server created',
                 refused.returncode != 0 and '2.105' in refused.stderr and
                 not left,
                 f'exit {refused.returncode}: {refused.stderr.strip()}; '
                 f'servers {[s.name for s in left]}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('endpoint_file', type=Path, nargs='?',
                        default=Path('.work/demo/endpoint.json'))
    args = parser.parse_args()
    info = json.loads(args.endpoint_file.read_text())
    checks = Checks()
    sdk_checks(checks, info)
    cli_checks(checks, info)
    return 1 if checks.failed else 0


if __name__ == '__main__':
    sys.exit(main())
