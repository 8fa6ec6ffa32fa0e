"""The API's WSGI pieces (tokens, Cinder's read side) and its HTTP client."""

import json
import sys
import urllib.parse
from wsgiref import simple_server

import requests

from nova.tests import fixtures as nova_fixtures

from demo_constants import MICROVERSION
from demo_constants import WAIT_SECONDS
from demo_report import pretty


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
