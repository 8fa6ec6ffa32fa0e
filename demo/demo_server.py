"""The API on a real port, and kept up for other clients on request."""

import json
import os
import secrets
import shutil
import signal
import threading
from wsgiref import simple_server

from nova.tests import fixtures as nova_fixtures

from demo_constants import MICROVERSION
from demo_constants import SPARE_VOLUMES
from demo_http import AfterEachRequest
from demo_http import ByPrefix
from demo_http import Client
from demo_http import QuietHandler
from demo_http import TokenAuth
from demo_http import VolumeAPI
import demo_observe


def clouds_yaml(endpoint, volume_endpoint, tokens):
    """clouds.yaml for the deployment: a member's cloud and an admin's.

    The token plugin (admin_token) sends a fixed token to a fixed
    endpoint; each service's endpoint is given explicitly.
    """
    clouds = []
    for cloud, token in (('demo', 'TOKEN'), ('demo-admin', 'ADMIN_TOKEN')):
        clouds.append(f"""\
  {cloud}:
    auth_type: admin_token
    auth:
      endpoint: {endpoint}
      token: {tokens[token]}
    compute_endpoint_override: {endpoint}
    block_storage_endpoint_override: {volume_endpoint}
""")
    return ('# Written by demo/multiattach_scenario.py --keep-running; '
            'removed when it stops.\nclouds:\n' + ''.join(clouds))


class ApiServer:
    """Serves the deployment's API over HTTP, and keeps it running."""

    def __init__(self, deployment):
        self.deployment = deployment
        self.options = deployment.options
        self.cinder = deployment.cinder
        self.computes = deployment.computes
        self.transcript = deployment.report.transcript
        self.guests_dir = self.options.transcript.with_name('guests')

    def serve_api(self):
        """Serve the API on 127.0.0.1 in a thread, with two new tokens."""
        self.tokens = {'TOKEN': secrets.token_hex(16),
                       'ADMIN_TOKEN': secrets.token_hex(16)}
        identities = {
            self.tokens['TOKEN']: ('demo', ['reader', 'member']),
            self.tokens['ADMIN_TOKEN']: ('admin',
                                         ['reader', 'member', 'admin']),
        }
        app = AfterEachRequest(
            TokenAuth(ByPrefix(VolumeAPI.PREFIX, VolumeAPI(self.cinder),
                               self.deployment.api_fixture.app()), identities),
            self.write_guest_disks)
        self.httpd = simple_server.make_server(
            '127.0.0.1', self.options.port, app, handler_class=QuietHandler)
        thread = threading.Thread(target=self.httpd.serve_forever,
                                  daemon=True)
        thread.start()
        self.deployment.addCleanup(self.httpd.server_close)
        self.deployment.addCleanup(self.httpd.shutdown)
        port = self.httpd.server_address[1]
        self.endpoint = f'http://127.0.0.1:{port}/v2.1'
        self.http = Client(self.endpoint, self.tokens, self.transcript)
        print(f'compute API listening on {self.endpoint}', flush=True)

    def keep_running(self, scenario):
        """Serve until SIGINT or SIGTERM; say how to reach the API."""
        pid = self.options.pid_to_signal or os.getpid()
        # Multiattach volumes attached to nothing yet, for your own attaches.
        for name in SPARE_VOLUMES:
            scenario.volume_ids[name] = self.cinder.create_volume(
                name, True)['id']
        volume_endpoint = (f'{self.endpoint.removesuffix("/v2.1")}'
                           f'{VolumeAPI.PREFIX}/v3')
        clouds_file = self.options.endpoint_file.with_name('clouds.yaml')
        info = {'endpoint': self.endpoint, 'microversion': MICROVERSION,
                'volume_endpoint': volume_endpoint,
                'clouds_yaml': str(clouds_file),
                'project_id': nova_fixtures.PROJECT_ID, **self.tokens,
                'pid': pid, 'servers': scenario.server_ids,
                'volumes': scenario.volume_ids, 'flavors': scenario.flavors,
                'guest_disks': str(self.guests_dir)}
        clouds_file.write_text(clouds_yaml(self.endpoint, volume_endpoint,
                                           self.tokens))
        endpoint_file = self.options.endpoint_file
        endpoint_file.write_text(json.dumps(info, indent=2))
        print(f'''
The compute API stays up until interrupted: Ctrl-C, or
kill -INT {pid} (or -TERM). Endpoint {self.endpoint},
microversion {MICROVERSION} (header OpenStack-API-Version: compute
{MICROVERSION}), project {nova_fixtures.PROJECT_ID}:

    export NOVA={self.endpoint}
    export TOKEN={self.tokens["TOKEN"]}        # member of the project
    export ADMIN_TOKEN={self.tokens["ADMIN_TOKEN"]}  # admin
    curl -s -H "X-Auth-Token: $TOKEN" \\
         -H "OpenStack-API-Version: compute {MICROVERSION}" \\
         $NOVA/servers/{scenario.server_ids[0]}/os-volume_attachments

Servers, volumes (spare ones too), flavors and tokens: {endpoint_file}
For openstacksdk and the openstack CLI (clouds demo and demo-admin):
    export OS_CLIENT_CONFIG_FILE={clouds_file}
    openstack --os-cloud demo --os-compute-api-version {MICROVERSION} \
        server volume list {scenario.server_ids[0]}
Each guest's libvirt disk XML, rewritten after every request:
{self.guests_dir}/<server id>.xml''', flush=True)
        # Whatever the services installed, and even if the shell that
        # started this in the background ignores SIGINT.
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        try:
            # An attach answers 202 and completes later: refresh the
            # guests' disks between requests too.
            while not stop.wait(1):
                self.write_guest_disks()
        finally:
            # Its tokens and guests die with the deployment.
            endpoint_file.unlink(missing_ok=True)
            clouds_file.unlink(missing_ok=True)
            shutil.rmtree(self.guests_dir, ignore_errors=True)
        print('\ninterrupted: stopping the deployment', flush=True)

    def write_guest_disks(self):
        """Write each guest's current <disk> elements to guests/<id>.xml."""
        demo_observe.write_guest_disks(self.computes, self.guests_dir)
