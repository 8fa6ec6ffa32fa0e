"""The volume-multiattach-enhancements feature, end to end.

Builds a Nova deployment inside this process from Nova's own functional
test stack: the compute API WSGI application served over HTTP on
127.0.0.1 (a real port), nova-conductor, nova-scheduler with real
placement, three nova-compute services running the libvirt driver over
fakelibvirt, SQLite databases, and block storage answered by Nova's
CinderFixture (switched to answer as Cinder with the companion series, as the
contract suite in contract/cinder/ verified on real Cinder code).

Then it drives the feature over HTTP at microversion 2.105, printing each
request and response, checks every outcome and ends with a summary table.
It exits 1 if any step did not behave as stated.

Run with: tools/series demo [--keep-running]
"""

# First: in eventlet mode this import applies the monkey patching, which
# must come before anything else is imported. tools/series runs the
# scenario in Nova's native threading mode
# (OS_NOVA_DISABLE_EVENTLET_PATCHING=true), where it patches nothing.
import nova.tests.functional  # noqa: F401 isort:skip

import argparse
import dataclasses
import json
import logging
import os
from pathlib import Path
import secrets
import shutil
import signal
import sys
import textwrap
import threading
import time
import unittest
import urllib.parse
from wsgiref import simple_server

import fixtures
from lxml import etree
import requests

from nova import context as nova_context
from nova.db.main import api as db
from nova import exception
from nova import objects
from nova.objects import service as service_obj
from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import libvirt as libvirt_fixtures
from nova.tests.functional.libvirt import base

MICROVERSION = '2.105'
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'  # GlanceFixture's cirros
COMPUTES = ('compute-a', 'compute-b', 'compute-c')
SPARE_VOLUMES = ('spare-1', 'spare-2', 'spare-3')
WAIT_SECONDS = 60


class DemoCinder(nova_fixtures.CinderFixture):
    """CinderFixture that also holds the volumes the scenario creates, and
    answers as Cinder with the companion series: both of its fixes on.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.access_mode_follows_attachment = True
        self.multiattach_reservations_overlap = True

    def create_volume(self, name, multiattach, image_id=None):
        volume = self.fake_vol_create(None, 1, name, None)
        volume['multiattach'] = multiattach
        if image_id:
            volume['bootable'] = True
            volume['volume_image_metadata'] = {'image_id': image_id}
        return volume

    def _is_multiattach(self, volume_id):
        if volume_id in self.volumes:
            return self.volumes[volume_id]['multiattach']
        return super()._is_multiattach(volume_id)

    def fake_get(self, context, volume_id, microversion=None):
        # CinderFixture makes up a volume for any id; Cinder answers 404.
        if volume_id not in self.volumes:
            raise exception.VolumeNotFound(volume_id=volume_id)
        return super().fake_get(context, volume_id, microversion)

    def attachments(self, volume_id=None):
        """(volume id, attachment) for every attachment Cinder holds."""
        return [(vid, dict(attachment))
                for vid, attachments in self.volume_to_attachment.items()
                if volume_id in (None, vid)
                for attachment in attachments.values()]


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


class TokenAuth:
    """What keystonemiddleware does for the API, for two known tokens.

    The functional stack reads the caller from X-Auth-User,
    X-Auth-Project-Id and X-Roles; this turns a token into those headers
    and refuses any other token with 401. Version discovery (GET / and
    GET /v2.1, GET /volume/ and /volume/v3/) needs no token, as in Nova's
    and Cinder's api-paste.ini.
    """

    UNAUTHENTICATED = ('/', '/v2.1', '/v2.1/', '/volume', '/volume/',
                       '/volume/v3', '/volume/v3/')

    def __init__(self, app, identities):
        self.app = app
        self.identities = identities

    def __call__(self, environ, start_response):
        for key in ('HTTP_X_AUTH_USER', 'HTTP_X_AUTH_PROJECT_ID',
                    'HTTP_X_ROLES'):
            environ.pop(key, None)
        if (environ['REQUEST_METHOD'] == 'GET' and
                environ.get('PATH_INFO', '/') in self.UNAUTHENTICATED):
            return self.app(environ, start_response)
        identity = self.identities.get(environ.get('HTTP_X_AUTH_TOKEN'))
        if identity is None:
            fault = {'unauthorized': {
                'code': 401, 'message': 'The request you have made '
                'requires authentication: unknown or missing X-Auth-Token.'}}
            start_response('401 Unauthorized',
                           [('Content-Type', 'application/json')])
            return [json.dumps(fault).encode()]
        user, roles = identity
        environ['HTTP_X_AUTH_USER'] = user
        environ['HTTP_X_AUTH_PROJECT_ID'] = nova_fixtures.PROJECT_ID
        environ['HTTP_X_ROLES'] = ','.join(roles)
        return self.app(environ, start_response)


class VolumeAPI:
    """The read side of the block storage API, answered from DemoCinder.

    Clients look a volume up in Cinder before they ask Nova to attach it
    (`openstack server add volume` does, and openstacksdk's attach_volume
    reads the volume's status and attachments). This serves, below
    /volume, the version document, GET /v3/volumes/<id> and
    GET /v3/volumes[/detail] (with ?name=), in Cinder's shapes, from the
    fixture Nova itself uses. Everything else is 405: volumes are
    created by the scenario, and attached or detached through Nova.
    """

    PREFIX = '/volume'
    VERSION = '3.72'  # Cinder 29.0.0 with the companion series

    def __init__(self, cinder):
        self.cinder = cinder

    def version_document(self, environ):
        url = (f'http://{environ["HTTP_HOST"]}{self.PREFIX}/v3/')
        return {'versions': [{
            'id': 'v3.0', 'status': 'CURRENT', 'version': self.VERSION,
            'min_version': '3.0', 'updated': '2023-03-01T00:00:00Z',
            'links': [{'rel': 'self', 'href': url}]}]}

    def volume(self, volume_id):
        volume = self.cinder.volumes[volume_id]
        # Cinder lists an attachment once the volume is connected (the
        # compute host has updated it with its connector).
        attachments = [
            {'id': volume_id, 'attachment_id': attachment['id'],
             'volume_id': volume_id, 'server_id': attachment['instance_uuid'],
             'host_name': attachment['connector'].get('host'),
             'device': attachment['connector'].get('device')}
            for _, attachment in self.cinder.attachments(volume_id)
            if attachment['connector']]
        return {'id': volume_id, 'name': volume['display_name'],
                'description': volume['display_description'],
                'size': volume['size'],
                'status': 'in-use' if attachments else 'available',
                'multiattach': volume['multiattach'],
                'bootable': str(volume.get('bootable', False)).lower(),
                'availability_zone': volume['availability_zone'],
                'attachments': attachments}

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '')[len(self.PREFIX):].strip('/')
        parts = path.split('/')
        if parts[1:2] == [environ.get('HTTP_X_AUTH_PROJECT_ID')]:
            del parts[1]  # /v3/<project id>/volumes, as in the catalog
        query = urllib.parse.parse_qs(environ.get('QUERY_STRING', ''))
        status, body = '404 Not Found', None
        if environ['REQUEST_METHOD'] != 'GET':
            status = '405 Method Not Allowed'
        elif parts in ([''], ['v3']):
            status, body = '200 OK', self.version_document(environ)
        elif parts[:2] == ['v3', 'volumes'] and len(parts) == 2 or \
                parts == ['v3', 'volumes', 'detail']:
            names = query.get('name')
            status, body = '200 OK', {'volumes': [
                self.volume(volume_id) for volume_id in self.cinder.volumes
                if not names or
                self.cinder.volumes[volume_id]['display_name'] in names]}
        elif parts[:2] == ['v3', 'volumes'] and len(parts) == 3:
            if parts[2] in self.cinder.volumes:
                status, body = '200 OK', {'volume': self.volume(parts[2])}
        if body is None:
            code = int(status.split()[0])
            body = {'itemNotFound' if code == 404 else 'badMethod': {
                'code': code, 'message': f'{status[4:]}: {path}'}}
        start_response(status, [('Content-Type', 'application/json')])
        return [json.dumps(body).encode()]


class ByPrefix:
    """Sends requests below `prefix` to `app`, the others to `default`."""

    def __init__(self, prefix, app, default):
        self.prefix = prefix
        self.app = app
        self.default = default

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '')
        if path == self.prefix or path.startswith(self.prefix + '/'):
            return self.app(environ, start_response)
        return self.default(environ, start_response)


class AfterEachRequest:
    """Calls `callback` once the application has answered a request."""

    def __init__(self, app, callback):
        self.app = app
        self.callback = callback

    def __call__(self, environ, start_response):
        body = list(self.app(environ, start_response))
        try:
            self.callback()
        except Exception as error:
            # The request itself was answered: say what failed, on stderr.
            print(f'after {environ["REQUEST_METHOD"]} '
                  f'{environ["PATH_INFO"]}: {type(error).__name__}: '
                  f'{error}', file=sys.stderr, flush=True)
        return body


class QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@dataclasses.dataclass
class Outcome:
    step: str
    expected: str
    observed: str
    ok: bool


class Transcript:
    """Prints the scenario and keeps it as Markdown."""

    def __init__(self):
        self.markdown = []

    def heading(self, text):
        print(f'\n== {text}\n', flush=True)
        self.markdown.append(f'\n## {text}\n')

    def text(self, text):
        print(text, flush=True)
        self.markdown.append(f'\n{text}\n')

    def block(self, lines, lang=''):
        print('\n'.join('    ' + line for line in lines) + '\n', flush=True)
        self.markdown.append('\n```' + lang + '\n' + '\n'.join(lines) +
                             '\n```\n')


def without_links(body):
    if isinstance(body, dict):
        return {key: without_links(value) for key, value in body.items()
                if key != 'links'}
    if isinstance(body, list):
        return [without_links(item) for item in body]
    return body


def pretty(body):
    return json.dumps(without_links(body), indent=2).splitlines()


class Client:
    """HTTP to the API's real port, each exchange shown in the transcript."""

    def __init__(self, endpoint, tokens, transcript):
        self.endpoint = endpoint
        self.tokens = tokens
        self.transcript = transcript
        self.session = requests.Session()

    def __call__(self, method, path, body=None, *, token='TOKEN',
                 microversion=MICROVERSION, show=True, root=False):
        """One request; `path` is below /v2.1, or below / with root=True.

        token=None sends no X-Auth-Token, microversion=None no version.
        """
        headers = {}
        if token:
            headers['X-Auth-Token'] = self.tokens[token]
        if microversion:
            headers['OpenStack-API-Version'] = f'compute {microversion}'
        url = (self.endpoint.removesuffix('/v2.1') if root
               else self.endpoint) + path
        response = self.session.request(
            method, url, json=body, headers=headers, timeout=WAIT_SECONDS)
        try:
            answer = response.json() if response.content else None
        except ValueError:
            answer = response.text
        if show:
            lines = [f'{method} {"" if root else "/v2.1"}{path}']
            if microversion:
                lines.append(f'OpenStack-API-Version: compute {microversion}')
            if token:
                lines.append(f'X-Auth-Token: ${token}')
            if body is not None:
                lines += [''] + pretty(body)
            lines += ['', f'HTTP {response.status_code} {response.reason}']
            if answer is not None:
                lines += pretty(answer) if not isinstance(answer, str) \
                    else [answer]
            self.transcript.block(lines, 'http')
        return response.status_code, answer


class Deployment(base.ServersTestBase):
    """Nova's functional libvirt stack, with the API on a real port."""

    # Casts stay casts, as in a deployment: a server builds after the
    # POST has returned, and the client waits for it.
    CAST_AS_CALL = False
    ADMIN_API = True

    def __init__(self, options, report):
        super().__init__('runTest')
        self.options = options
        # Nova's TestCase deletes its attributes after the run: the caller
        # keeps the report.
        self.report = report
        self.outcomes = report.outcomes
        self.transcript = Transcript()
        self.guests_dir = options.transcript.with_name('guests')
        self.volume_ids = {}
        self.server_ids = []
        self.flavors = {}

    def setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.CinderFixture', DemoCinder))
        super().setUp()
        # Live migration: fakelibvirt hands the guest to the destination.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            self._migrate_guest))
        # Resize: the libvirt driver copies the instance directory to the
        # destination over SSH; here both hosts are this process and the
        # root disk is a volume, so there is nothing to copy.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver'
            '.migrate_disk_and_power_off', return_value='{}'))
        for hostname in COMPUTES:
            self.start_compute(hostname)
        self.ctxt = nova_context.get_admin_context()
        # The services log their shutdown after the log capture has ended.
        self.addCleanup(logging.disable, logging.INFO)

    def _migrate_guest(self, domain, destination, params, flags):
        host = urllib.parse.urlparse(destination).hostname
        self.computes[host].driver._host.get_connection().createXML(
            params['destination_xml'], 0)
        domain.complete_job()

    def runTest(self):
        self.serve_api()
        try:
            self.scenario()
        finally:
            self.write_transcript()
        self.report.print_summary()
        if self.report.ok and self.options.keep_running:
            self.keep_running()

    # --- the API on a real port -------------------------------------------

    def serve_api(self):
        self.tokens = {'TOKEN': secrets.token_hex(16),
                       'ADMIN_TOKEN': secrets.token_hex(16)}
        identities = {
            self.tokens['TOKEN']: ('demo', ['reader', 'member']),
            self.tokens['ADMIN_TOKEN']: ('admin',
                                         ['reader', 'member', 'admin']),
        }
        app = AfterEachRequest(
            TokenAuth(ByPrefix(VolumeAPI.PREFIX, VolumeAPI(self.cinder),
                               self.api_fixture.app()), identities),
            self.write_guest_disks)
        self.httpd = simple_server.make_server(
            '127.0.0.1', self.options.port, app, handler_class=QuietHandler)
        thread = threading.Thread(target=self.httpd.serve_forever,
                                  daemon=True)
        thread.start()
        self.addCleanup(self.httpd.server_close)
        self.addCleanup(self.httpd.shutdown)
        port = self.httpd.server_address[1]
        self.endpoint = f'http://127.0.0.1:{port}/v2.1'
        self.http = Client(self.endpoint, self.tokens, self.transcript)
        print(f'compute API listening on {self.endpoint}', flush=True)

    def keep_running(self):
        pid = self.options.pid_to_signal or os.getpid()
        # Multiattach volumes attached to nothing yet, for your own attaches.
        for name in SPARE_VOLUMES:
            self.volume_ids[name] = self.cinder.create_volume(name, True)['id']
        volume_endpoint = (f'{self.endpoint.removesuffix("/v2.1")}'
                           f'{VolumeAPI.PREFIX}/v3')
        clouds_file = self.options.endpoint_file.with_name('clouds.yaml')
        info = {'endpoint': self.endpoint, 'microversion': MICROVERSION,
                'volume_endpoint': volume_endpoint,
                'clouds_yaml': str(clouds_file),
                'project_id': nova_fixtures.PROJECT_ID, **self.tokens,
                'pid': pid, 'servers': self.server_ids,
                'volumes': self.volume_ids, 'flavors': self.flavors,
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
         $NOVA/servers/{self.server_ids[0]}/os-volume_attachments

Servers, volumes (spare ones too), flavors and tokens: {endpoint_file}
For openstacksdk and the openstack CLI (clouds demo and demo-admin):
    export OS_CLIENT_CONFIG_FILE={clouds_file}
    openstack --os-cloud demo --os-compute-api-version {MICROVERSION} \
        server volume list {self.server_ids[0]}
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
        self.guests_dir.mkdir(parents=True, exist_ok=True)
        current = set()
        for host, compute in self.computes.items():
            connection = compute.driver._host.get_connection()
            for domain in connection.listAllDomains(
                    libvirt_fixtures.VIR_CONNECT_LIST_DOMAINS_ACTIVE |
                    libvirt_fixtures.VIR_CONNECT_LIST_DOMAINS_INACTIVE):
                disks = etree.Element('disks')
                disks.extend(etree.fromstring(domain.XMLDesc(0)).findall(
                    './devices/disk'))
                etree.indent(disks)
                text = (f'<!-- {domain.name()} on {host} -->\n' +
                        etree.tostring(disks, encoding='unicode') + '\n')
                path = self.guests_dir / f'{domain.UUIDString()}.xml'
                current.add(path)
                if not path.exists() or path.read_text() != text:
                    path.write_text(text)
        for path in self.guests_dir.glob('*.xml'):
            if path not in current:
                path.unlink()

    def write_transcript(self):
        path = self.options.transcript
        path.parent.mkdir(parents=True, exist_ok=True)
        table = ['', '## Summary', '',
                 '| step | expected | observed | |', '|---|---|---|---|']
        table += [f'| {o.step} | {o.expected} | {o.observed} | '
                  f'{"ok" if o.ok else "**FAILED**"} |'
                  for o in self.outcomes]
        path.write_text(
            '# volume-multiattach-enhancements: the scenario\n\n'
            f'Nova 34.0.0 with the series, microversion {MICROVERSION}, '
            f'API at {self.endpoint}.\n' +
            ''.join(self.transcript.markdown) + '\n'.join(table) + '\n')
        (path.parent / 'nova.log').write_text(self.stdlog.logger.output)

    # --- checks -------------------------------------------------------------

    def expect(self, step, expected, observed, ok):
        self.outcomes.append(Outcome(step, expected, observed, bool(ok)))
        mark = 'ok' if ok else 'FAILED'
        self.transcript.text(f'[{mark}] {step}: expected {expected}; '
                             f'observed {observed}')

    def expect_status(self, step, expected_code, code, body, mentions=None):
        message = ''
        if isinstance(body, dict) and len(body) == 1:
            fault = next(iter(body.values()))
            if isinstance(fault, dict):
                message = fault.get('message', '')
        ok = code == expected_code and (mentions is None or
                                        mentions in message)
        observed = f'{code}' + (f' "{message}"' if message else '')
        expected = f'{expected_code}' + (
            f' naming "{mentions}"' if mentions else '')
        self.expect(step, expected, observed, ok)

    def wait_for(self, what, predicate):
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            result = predicate()
            if result:
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f'timed out waiting for {what}')
            time.sleep(0.2)

    def server(self, server_id):
        code, body = self.http('GET', f'/servers/{server_id}',
                               token='ADMIN_TOKEN', show=False)
        assert code == 200, (code, body)
        return body['server']

    def wait_for_server(self, server_id, status):
        def settled():
            server = self.server(server_id)
            if server['status'] == 'ERROR':
                raise AssertionError(
                    f'server {server_id} went to ERROR: {server.get("fault")}')
            if (server['status'] == status and
                    server['OS-EXT-STS:task_state'] is None):
                return server
        server = self.wait_for(f'server {server_id} {status}', settled)
        self.transcript.text(
            f'(polled GET /v2.1/servers/{server_id}: {server["name"]} '
            f'{server["status"]} on {server["OS-EXT-SRV-ATTR:host"]})')
        return server

    def wait_for_attached(self, server_id, volume_id):
        def attached():
            return [a for _, a in self.cinder.attachments(volume_id)
                    if a['instance_uuid'] == server_id and
                    a['attach_status'] == 'attached']
        self.wait_for(f'volume {volume_id} attached to {server_id}',
                      attached)

    def guest_disk(self, server, device):
        server_id, host = server['id'], server['OS-EXT-SRV-ATTR:host']
        connection = self.computes[host].driver._host.get_connection()
        xml = connection.lookupByUUIDString(server_id).XMLDesc(0)
        target = device.rsplit('/', 1)[-1]
        for disk in etree.fromstring(xml).findall('./devices/disk'):
            if disk.find('./target').get('dev') == target:
                return host, disk
        raise AssertionError(f'no disk {target} in the guest of {server_id}')

    def volume_attachments(self, server_id, show=True):
        code, body = self.http(
            'GET', f'/servers/{server_id}/os-volume_attachments', show=show)
        assert code == 200, (code, body)
        return body['volumeAttachments']

    def snapshot(self):
        """What a refused request must leave unchanged."""
        code, body = self.http('GET', '/servers', show=False)
        assert code == 200, (code, body)
        return (sorted(s['id'] for s in body['servers']),
                sorted(a['id'] for _, a in self.cinder.attachments()))

    def expect_unchanged(self, step, before):
        after = self.snapshot()
        self.expect(step, 'no server or Cinder attachment added',
                    'none added' if after == before else
                    f'servers {before[0]} -> {after[0]}, attachments '
                    f'{before[1]} -> {after[1]}', after == before)

    # --- the scenario -------------------------------------------------------

    def scenario(self):
        steps = (self.prepare, self.multi_create, self.attach_modes,
                 self.guest_disks, self.moves, self.refusals)
        for step in steps:
            try:
                step()
            except Exception as error:
                self.expect(step.__name__, 'to complete',
                            f'{type(error).__name__}: {error}', False)
                return

    def prepare(self):
        self.transcript.heading('0. The deployment')
        code, body = self.http('GET', '/', token=None, microversion=None,
                               root=True, show=False)
        self.expect_status('0 GET / without a token (versions)', 200,
                           code, body)
        code, body = self.http('GET', '', token=None, microversion=None,
                               show=False)
        self.expect_status('0 GET /v2.1 without a token', 200, code, body)
        version = body['version']
        self.transcript.text(
            f'Nova compute API {self.endpoint}: microversions '
            f'{version["min_version"]} to {version["version"]}; computes '
            f'{", ".join(COMPUTES)} (libvirt driver, fakelibvirt).')
        self.expect('0 API version', f'max microversion {MICROVERSION}',
                    version['version'], version['version'] == MICROVERSION)
        self.flavors = {}
        for name, vcpus, ram in (('demo.small', 1, 512),
                                 ('demo.medium', 2, 1024)):
            code, body = self.http(
                'POST', '/flavors', {'flavor': {
                    'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': 1}},
                token='ADMIN_TOKEN', show=False)
            assert code == 200, (code, body)
            self.flavors[name] = body['flavor']['id']
        self.transcript.text('Flavors demo.small (1 vCPU, 512 MiB) and '
                             'demo.medium (2 vCPUs, 1 GiB) created.')

    def create_volume(self, name, multiattach, image_id=None):
        volume = self.cinder.create_volume(name, multiattach, image_id)
        self.volume_ids[name] = volume['id']
        cli = (f'openstack volume create --size 1 '
               f'{"--type multiattach " if multiattach else ""}'
               f'{"--image cirros " if image_id else ""}{name}')
        self.transcript.text(
            f'Cinder (Nova\'s CinderFixture in this process; on a cloud: '
            f'`{cli}`): volume {volume["id"]} "{name}", multiattach '
            f'{multiattach}.')
        return volume['id']

    def multi_create(self):
        self.transcript.heading(
            '1. Three servers in one request, booted from one read-only '
            'multiattach volume')
        self.root_volume = self.create_volume('shared-root', True, IMAGE)
        code, body = self.http('POST', '/servers', {'server': {
            'name': 'hpc', 'flavorRef': self.flavors['demo.small'],
            'networks': 'none', 'min_count': 3, 'max_count': 3,
            'return_reservation_id': True,
            'block_device_mapping_v2': [{
                'uuid': self.root_volume, 'source_type': 'volume',
                'destination_type': 'volume', 'boot_index': 0,
                'attach_mode': 'ro'}]}})
        self.expect_status('1 POST /servers min_count=3 attach_mode=ro',
                           202, code, body)
        assert code == 202, (code, body)
        code, body = self.http(
            'GET', '/servers?reservation_id=' + body['reservation_id'])
        self.server_ids = sorted(
            (s['id'] for s in body['servers']),
            key=lambda i: self.server(i)['OS-EXT-SRV-ATTR:launch_index'])
        statuses = [self.wait_for_server(i, 'ACTIVE')['status']
                    for i in self.server_ids]
        self.expect('1 servers of the request', '3 ACTIVE',
                    f'{len(statuses)} {", ".join(sorted(set(statuses)))}',
                    statuses == ['ACTIVE'] * 3)
        modes = []
        for server_id in self.server_ids:
            attachments = self.volume_attachments(server_id)
            modes += [a['attach_mode'] for a in attachments]
        self.expect('1 GET os-volume_attachments', 'root volume ro on each',
                    ', '.join(modes), modes == ['ro'] * 3)
        records = self.cinder.attachments(self.root_volume)
        owners = sorted(a['instance_uuid'] for _, a in records)
        self.transcript.text(
            'Cinder\'s attachments of shared-root: ' + '; '.join(
                f'{a["id"][:8]} server {a["instance_uuid"][:8]} '
                f'{a["attach_mode"]} {a["attach_status"]}'
                for _, a in records))
        self.expect('1 Cinder attachments', 'one ro attachment per server',
                    f'{len(records)}, modes '
                    f'{sorted({a["attach_mode"] for _, a in records})}',
                    owners == sorted(self.server_ids) and
                    all(a['attach_mode'] == 'ro' for _, a in records))

    def attach_modes(self):
        self.transcript.heading(
            '2. A second multiattach volume: read/write on server 1, '
            'read-only on servers 2 and 3')
        self.data_volume = self.create_volume('shared-data', True)
        wanted = dict(zip(self.server_ids, ('rw', 'ro', 'ro')))
        for server_id, mode in wanted.items():
            code, body = self.http(
                'POST', f'/servers/{server_id}/os-volume_attachments',
                {'volumeAttachment': {'volumeId': self.data_volume,
                                      'attach_mode': mode}})
            # Since 2.101 the attach is asynchronous: 202, then watch.
            self.expect_status(f'2 attach shared-data {mode}', 202, code,
                               body)
            self.wait_for_attached(server_id, self.data_volume)
        observed = {}
        for server_id in self.server_ids:
            for attachment in self.volume_attachments(server_id):
                if attachment['volumeId'] == self.data_volume:
                    observed[server_id] = attachment['attach_mode']
        code, body = self.http(
            'GET', f'/servers/{self.server_ids[1]}/os-volume_attachments/'
            f'{self.data_volume}')
        shown = body['volumeAttachment']['attach_mode'] if code == 200 \
            else code
        self.expect('2 GET os-volume_attachments (list)', 'rw, ro, ro',
                    ', '.join(observed.get(i, '-') for i in self.server_ids),
                    observed == wanted)
        self.expect('2 GET os-volume_attachments/{volume} (show)', 'ro',
                    str(shown), shown == 'ro')

    def check_guest(self, step, server_id, show=True):
        """Each volume's guest disk: read-only exactly when attached ro."""
        results = []
        server = self.server(server_id)
        for attachment in self.volume_attachments(server_id, show=False):
            host, disk = self.guest_disk(server, attachment['device'])
            readonly = disk.find('./readonly') is not None
            shareable = disk.find('./shareable') is not None
            if show:
                xml = etree.tostring(disk, pretty_print=True).decode()
                self.transcript.block(
                    [f'<!-- {server["name"]} on {host}, '
                     f'{attachment["device"]}, attach_mode '
                     f'{attachment["attach_mode"]} -->'] +
                    xml.rstrip().splitlines(), 'xml')
            results.append((attachment['attach_mode'], readonly, shareable))
        ok = all(readonly == (mode == 'ro') and shareable
                 for mode, readonly, shareable in results)
        observed = ', '.join(
            f'{mode}: ' + ('<readonly/>' if readonly else 'writable') +
            (' <shareable/>' if shareable else '')
            for mode, readonly, shareable in results)
        self.expect(step, 'ro disks <readonly/>, rw writable, all '
                    '<shareable/>', observed, ok)
        return host

    def guest_disks(self):
        self.transcript.heading('3. The guests\' disks (libvirt domain XML)')
        for number, server_id in enumerate(self.server_ids, 1):
            self.check_guest(f'3 guest disks of server {number}', server_id)

    def moves(self):
        self.transcript.heading(
            '4. Server 2 (everything read-only): hard reboot, live '
            'migration, resize; still read-only after each')
        self.transcript.text(
            'In this one process, fakelibvirt hands a live-migrated guest '
            'to the destination host, and a resize skips the SSH copy of '
            'the instance directory (the root disk is a volume); '
            'everything else is Nova\'s own code.')
        server_id = self.server_ids[1]
        code, body = self.http('POST', f'/servers/{server_id}/action',
                               {'reboot': {'type': 'HARD'}})
        self.expect_status('4 hard reboot', 202, code, body)
        self.wait_for_server(server_id, 'ACTIVE')
        self.check_guest('4 after hard reboot', server_id, show=False)

        source = self.server(server_id)['OS-EXT-SRV-ATTR:host']
        code, body = self.http(
            'POST', f'/servers/{server_id}/action',
            {'os-migrateLive': {'host': None, 'block_migration': 'auto'}},
            token='ADMIN_TOKEN')
        self.expect_status('4 live migration', 202, code, body)
        self.wait_for_server(server_id, 'ACTIVE')
        host = self.check_guest('4 after live migration', server_id)
        self.expect('4 live migration host', f'not {source}', host,
                    host != source)

        source = host
        code, body = self.http(
            'POST', f'/servers/{server_id}/action',
            {'resize': {'flavorRef': self.flavors['demo.medium']}})
        self.expect_status('4 resize', 202, code, body)
        self.wait_for_server(server_id, 'VERIFY_RESIZE')
        host = self.check_guest('4 resized (VERIFY_RESIZE)', server_id,
                                show=False)
        code, body = self.http('POST', f'/servers/{server_id}/action',
                               {'confirmResize': None})
        self.expect_status('4 confirm resize', 204, code, body)
        server = self.wait_for_server(server_id, 'ACTIVE')
        host = self.check_guest('4 after resize', server_id)
        self.expect('4 resize host and flavor',
                    f'not {source}, demo.medium',
                    f'{host}, {server["flavor"]["original_name"]}',
                    host != source and
                    server['flavor']['original_name'] == 'demo.medium')

    def refusals(self):
        self.transcript.heading(
            '5. What is refused, and changes nothing')
        server_id = self.server_ids[0]
        self.scratch_volume = self.create_volume('scratch', False)

        before = self.snapshot()
        code, body = self.http(
            'POST', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': {'volumeId': self.scratch_volume,
                                  'attach_mode': 'ro'}},
            microversion='2.104')
        self.expect_status('5 attach_mode at 2.104', 400, code, body,
                           "'attach_mode' was unexpected")
        self.expect_unchanged('5 attach_mode at 2.104', before)

        code, body = self.http(
            'POST', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': {'volumeId': self.scratch_volume,
                                  'attach_mode': 'readonly'}})
        self.expect_status('5 attach_mode "readonly"', 400, code, body,
                           "'readonly' is not one of ['ro', 'rw']")
        self.expect_unchanged('5 attach_mode "readonly"', before)

        code, body = self.http('POST', '/servers', {'server': {
            'name': 'local', 'flavorRef': self.flavors['demo.small'],
            'imageRef': IMAGE, 'networks': 'none',
            'block_device_mapping_v2': [{
                'uuid': IMAGE, 'source_type': 'image',
                'destination_type': 'local', 'boot_index': 0,
                'attach_mode': 'ro'}]}})
        self.expect_status('5 local BDM with attach_mode', 400, code, body,
                           'attach_mode')
        self.expect_unchanged('5 local BDM with attach_mode', before)

        code, body = self.http('POST', '/servers', {'server': {
            'name': 'pair', 'flavorRef': self.flavors['demo.small'],
            'imageRef': IMAGE, 'networks': 'none', 'min_count': 2,
            'block_device_mapping_v2': [{
                'uuid': IMAGE, 'source_type': 'image',
                'destination_type': 'local', 'boot_index': 0,
            }, {
                'uuid': self.scratch_volume, 'source_type': 'volume',
                'destination_type': 'volume', 'boot_index': -1}]}})
        self.expect_status('5 multi-create, volume without multiattach',
                           400, code, body,
                           'only multiattach volumes can be shared')
        self.expect_unchanged('5 multi-create, volume without multiattach',
                              before)

        missing = '7a0d1c52-1f4b-4c1e-9d55-000000000404'
        code, body = self.http(
            'POST', f'/servers/{server_id}/os-volume_attachments',
            {'volumeAttachment': {'volumeId': missing,
                                  'attach_mode': 'ro'}})
        self.expect_status('5 attach of an unknown volume', 404, code, body,
                           missing)
        self.expect_unchanged('5 attach of an unknown volume', before)

        code, body = self.http('GET', '/servers', token=None, show=False)
        self.expect_status('5 GET /servers without a token', 401, code,
                           body, 'requires authentication')

        host = self.server(server_id)['OS-EXT-SRV-ATTR:host']
        # As a compute not yet upgraded to this series would report.
        self.pin_service_version(host, service_obj.SERVICE_VERSION - 1)
        try:
            code, body = self.http(
                'POST', f'/servers/{server_id}/os-volume_attachments',
                {'volumeAttachment': {'volumeId': self.scratch_volume,
                                      'attach_mode': 'ro'}})
        finally:
            self.pin_service_version(host, service_obj.SERVICE_VERSION)
        self.expect_status(f'5 ro attach, {host} at service version '
                           f'{service_obj.SERVICE_VERSION - 1}', 409, code,
                           body)
        self.expect_unchanged('5 ro attach on an old compute', before)

    def pin_service_version(self, host, version):
        """Make one nova-compute report an older service version.

        The API reads the version from the compute's service record, which
        the compute rewrites on every status report: set both.
        """
        compute = self.computes[host]
        compute.service_ref.version = version
        service = objects.Service.get_by_compute_host(self.ctxt, host)
        db.service_update(self.ctxt, service.id, {'version': version})
        self.transcript.text(
            f'(nova-compute on {host} now reports service version '
            f'{version})')


class Report:
    """The outcome of each step, and the table that ends the run."""

    def __init__(self, transcript_path):
        self.transcript_path = transcript_path
        self.outcomes = []
        self.printed = False

    @property
    def ok(self):
        return bool(self.outcomes) and all(o.ok for o in self.outcomes)

    def print_summary(self):
        rows = [('step', 'expected', 'observed', '')] + [
            (o.step, o.expected, o.observed, 'ok' if o.ok else 'FAILED')
            for o in self.outcomes]
        widths = [min(max(len(row[i]) for row in rows), limit)
                  for i, limit in enumerate((44, 44, 56))]
        print()
        for row in rows:
            # A long cell wraps onto further lines of its own column.
            cells = [textwrap.wrap(cell, width) or ['']
                     for cell, width in zip(row, widths)]
            for number in range(max(len(lines) for lines in cells)):
                line = '  '.join(
                    (lines[number] if number < len(lines) else '').ljust(
                        width) for lines, width in zip(cells, widths))
                print((line + ('  ' + row[3] if number == 0 else ''))
                      .rstrip())
        failed = [o for o in self.outcomes if not o.ok]
        print(f'\ntranscript: {self.transcript_path}  (Nova\'s log: '
              f'{self.transcript_path.with_name("nova.log")})')
        print(f'{len(self.outcomes) - len(failed)} steps as stated, '
              f'{len(failed)} not' +
              ('' if failed else ': the feature works end to end'),
              flush=True)
        self.printed = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--keep-running', action='store_true',
                        help='leave the API listening until interrupted')
    parser.add_argument('--port', type=int, default=0,
                        help='port on 127.0.0.1 (default: any free port)')
    parser.add_argument('--transcript', type=Path,
                        default=Path('demo-transcript.md'))
    parser.add_argument('--pid-to-signal', type=int, default=0,
                        help='the PID to name in the keep-running message '
                        '(that of tools/series, which passes signals on; '
                        'default: this process)')
    args = parser.parse_args()
    args.endpoint_file = args.transcript.with_name('endpoint.json')
    args.endpoint_file.unlink(missing_ok=True)
    args.endpoint_file.with_name('clouds.yaml').unlink(missing_ok=True)
    report = Report(args.transcript)
    result = unittest.TestResult()
    Deployment(args, report).run(result)
    for _, trace in result.errors + result.failures:
        # The deployment did not start or the scenario could not run.
        print(trace, file=sys.stderr)
        report.outcomes.append(Outcome(
            'the deployment', 'to run', trace.strip().splitlines()[-1],
            False))
        report.printed = False
    if not report.printed:
        report.print_summary()
    return 0 if report.ok else 1


if __name__ == '__main__':
    sys.exit(main())
