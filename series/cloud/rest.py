"""A small client of the cloud's REST APIs (the standard library only):
a Keystone token per user, requests with explicit microversions, and
waiting for a state.
"""

import dataclasses
import json
import time
import urllib.error
import urllib.request

from series.cloud import layout
from series import config

TIMEOUT = 120


@dataclasses.dataclass
class Response:
    status: int
    headers: dict
    text: str

    @property
    def body(self):
        return json.loads(self.text) if self.text else None


class APIError(config.SeriesError):

    def __init__(self, method, url, response):
        self.response = response
        super().__init__(f'{method} {url}: {response.status} '
                         f'{response.text[:500]}')


def request(method, url, body=None, headers=None, timeout=TIMEOUT):
    """One HTTP request; the Response whatever its status."""
    data = None
    headers = dict(headers or {})
    if body is not None:
        if isinstance(body, bytes):
            data = body
            headers.setdefault('Content-Type', 'application/octet-stream')
        else:
            data = json.dumps(body).encode()
            headers.setdefault('Content-Type', 'application/json')
    req = urllib.request.Request(url, data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as reply:
            return Response(reply.status, dict(reply.headers),
                            reply.read().decode(errors='replace'))
    except urllib.error.HTTPError as error:
        return Response(error.code, dict(error.headers),
                        error.read().decode(errors='replace'))


class Session:
    """A user scoped to a project, talking to the services by name
    (layout.PORTS), each request with its own microversion if any.
    """

    VERSION_PREFIX = {'nova-api': '/v2.1', 'cinder-api': '/v3',
                      'keystone': '/v3', 'glance-api': '/v2',
                      'neutron-api': '/v2.0', 'placement': ''}

    def __init__(self, user, project, domain='Default'):
        self.user, self.project, self.domain = user, project, domain
        self.token = None
        self.project_id = None

    def authenticate(self):
        reply = request('POST', layout.url('keystone', '/v3/auth/tokens'), {
            'auth': {
                'identity': {'methods': ['password'], 'password': {'user': {
                    'name': self.user, 'domain': {'name': self.domain},
                    'password': layout.password()}}},
                'scope': {'project': {'name': self.project,
                                      'domain': {'name': self.domain}}}}})
        if reply.status != 201:
            raise APIError('POST', '/v3/auth/tokens', reply)
        self.token = reply.headers['X-Subject-Token']
        self.project_id = reply.body['token']['project']['id']
        return self

    def call(self, method, service, path, body=None, microversion=None,
             headers=None, expect=None):
        """Request `path` of `service`; with `expect` (a status or a
        tuple), raise APIError on any other status.
        """
        if self.token is None:
            self.authenticate()
        headers = dict(headers or {}, **{'X-Auth-Token': self.token})
        if microversion:
            kind = {'cinder-api': 'volume', 'placement': 'placement'}.get(
                service, 'compute')
            headers['OpenStack-API-Version'] = f'{kind} {microversion}'
        url = layout.url(service, self.VERSION_PREFIX[service] + path)
        reply = request(method, url, body, headers)
        if expect is not None:
            allowed = expect if isinstance(expect, tuple) else (expect,)
            if reply.status not in allowed:
                raise APIError(method, url, reply)
        return reply

    def get(self, service, path, **kwargs):
        return self.call('GET', service, path, expect=200, **kwargs).body


def wait(what, probe, timeout, interval=1.0):
    """Call probe() until it returns something true; return it."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise config.SeriesError(f'{what}: still not done after '
                                     f'{timeout}s')
        time.sleep(interval)


def admin_session():
    return Session(layout.ADMIN, 'admin').authenticate()
