"""Tests of series.cloud.rest against a real HTTP server on this
machine: what each request sends, a token taken once per session, the
microversion header each service reads, APIError on a status not
expected, and wait().
"""

import json
import unittest

from series.cloud import layout
from series.cloud import rest
from series import config
from series.tests import base


def echo(method, path, body):
    """The path back, with the status the path names (/status/404)."""
    status = int(path.split('/status/')[-1]) if '/status/' in path else 200
    return status, {'path': path}


class RestTest(base.RootTestCase):

    def setUp(self):
        super().setUp()
        self.seen = base.fake_services(self, echo)

    def test_a_json_body_and_a_bytes_body(self):
        rest.request('POST', layout.url('nova-api', '/a'), {'x': 1})
        rest.request('PUT', layout.url('glance-api', '/b'), b'\0\1')
        (_, _, json_headers, json_body), (_, _, bytes_headers, _) = self.seen
        self.assertEqual('application/json', json_headers['Content-Type'])
        self.assertEqual({'x': 1}, json.loads(json_body))
        self.assertEqual('application/octet-stream',
                         bytes_headers['Content-Type'])

    def test_an_error_status_is_a_response_not_an_exception(self):
        reply = rest.request('GET', layout.url('nova-api', '/status/404'))
        self.assertEqual(404, reply.status)
        self.assertEqual({'path': '/status/404'}, reply.body)

    def test_one_token_per_session_and_each_services_microversion(self):
        session = rest.Session('admin', 'admin')
        session.call('GET', 'nova-api', '/servers', microversion='2.105')
        session.call('GET', 'cinder-api', '/volumes', microversion='3.54')
        session.call('GET', 'placement', '/traits', microversion='1.6')
        methods_paths = [(method, path) for method, path, _, _ in self.seen]
        self.assertEqual([('POST', '/v3/auth/tokens'),
                          ('GET', '/v2.1/servers'), ('GET', '/v3/volumes'),
                          ('GET', '/traits')], methods_paths)
        self.assertEqual(base.FAKE_PASSWORD, json.loads(self.seen[0][3])[
            'auth']['identity']['password']['user']['password'])
        self.assertEqual(
            [('token-1', 'compute 2.105'), ('token-1', 'volume 3.54'),
             ('token-1', 'placement 1.6')],
            [(headers['X-Auth-Token'], headers['OpenStack-API-Version'])
             for _, _, headers, _ in self.seen[1:]])
        self.assertEqual('project-id', session.project_id)

    def test_a_status_not_expected_raises(self):
        session = rest.Session('admin', 'admin')
        self.assertEqual(404, session.call('GET', 'nova-api', '/status/404',
                                           expect=(200, 404)).status)
        with self.assertRaisesRegex(rest.APIError, '/status/409: 409'):
            session.call('GET', 'nova-api', '/status/409', expect=202)


class WaitTest(unittest.TestCase):

    def test_the_first_true_result(self):
        results = iter([None, [], {'done': 1}])
        self.assertEqual({'done': 1}, rest.wait('x', lambda: next(results),
                                                5, interval=0))

    def test_a_timeout_raises(self):
        with self.assertRaisesRegex(config.SeriesError,
                                    'the thing: still not done after 0.05s'):
            rest.wait('the thing', lambda: None, 0.05, interval=0.01)


if __name__ == '__main__':
    unittest.main()
