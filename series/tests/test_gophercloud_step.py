"""Tests of series.cloud.gophercloud_step: the Go program attaches through
the patched gophercloud (built by the real go command against the series'
work tree, run against a fake Keystone and Nova that record its requests),
and the step's judgement of what it printed.
"""

import http.server
import json
import os
import subprocess
import threading
import unittest
from unittest import mock

from series.cloud.client import Failed
from series.cloud import gophercloud_step
from series.cloud import layout
from series.tests import base

GOPHERCLOUD_TREE = base.REPOSITORY / '.work' / 'trees' / 'gophercloud'


class FakeCloud(http.server.BaseHTTPRequestHandler):
    """Keystone's token (with a catalog naming this server as Nova) and
    Nova's volume attachments: a POST is accepted (202, no body) and the
    attachment then listed (after `server.unlisted_gets` GETs answered 404,
    as while Nova attaches) in the mode `server.listed_mode` gives it; the
    server `gone` is not found.
    """

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=()):
        text = json.dumps(body).encode() if body is not None else b''
        self.send_response(status)
        for name, value in dict(headers, **{
                'Content-Length': str(len(text)),
                'Content-Type': 'application/json'}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(text)

    def answer(self):
        length = int(self.headers.get('Content-Length') or 0)
        body = json.loads(self.rfile.read(length) or 'null')
        self.server.seen.append((self.command, self.path, dict(self.headers),
                                 body))
        url = f'http://127.0.0.1:{self.server.server_address[1]}'
        parts = self.path.strip('/').split('/')
        if self.path == '/v3/auth/tokens':
            self.reply(201, {'token': {
                'expires_at': '2099-01-01T00:00:00.000000Z',
                'catalog': [{'type': 'compute', 'name': 'nova', 'endpoints': [
                    {'interface': 'public', 'region': layout.REGION,
                     'region_id': layout.REGION,
                     'url': f'{url}/compute/v2.1'}]}]}},
                headers={'X-Subject-Token': 'token'})
        elif (self.command == 'POST' and parts[-1] == 'os-volume_attachments'
              and parts[-2] != 'gone'):
            volume = body['volumeAttachment']['volumeId']
            self.server.modes[parts[-2], volume] = (
                body['volumeAttachment'].get('attach_mode', 'rw'))
            self.reply(202)
        elif (self.command == 'GET' and
              tuple(parts[-3::2]) in self.server.modes and
              self.server.unlisted_gets):
            self.server.unlisted_gets -= 1
            self.reply(404, {'itemNotFound': {'message': 'attaching'}})
        elif (self.command == 'GET' and
              tuple(parts[-3::2]) in self.server.modes):
            server, volume = parts[-3], parts[-1]
            self.reply(200, {'volumeAttachment': {
                'serverId': server, 'volumeId': volume,
                'attach_mode': self.server.listed_mode(
                    self.server.modes[server, volume])}})
        else:
            self.reply(404, {'itemNotFound': {'message': 'not found'}})

    do_GET = do_POST = answer


class ProgramTest(unittest.TestCase):
    """The real program against the fake cloud."""

    def setUp(self):
        if not (GOPHERCLOUD_TREE / 'go.mod').exists():
            self.skipTest('no gophercloud work tree (tools/series apply '
                          'gophercloud); CI runs this test once it has one')
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), FakeCloud)
        server.seen, server.modes = [], {}
        server.listed_mode = lambda mode: mode
        server.unlisted_gets = 0
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.server = server
        environment = {
            'OS_AUTH_URL': f'http://127.0.0.1:{server.server_address[1]}/v3',
            'OS_USERNAME': 'member', 'OS_PASSWORD': 'secret',
            'OS_PROJECT_NAME': 'project', 'OS_DOMAIN_NAME': 'Default',
            'OS_REGION_NAME': layout.REGION}
        patcher = mock.patch.object(gophercloud_step, 'environment',
                                    return_value=environment)
        patcher.start()
        self.addCleanup(patcher.stop)

    def attachment_posts(self):
        return [(path, headers.get('Openstack-Api-Version'), body)
                for method, path, headers, body in self.server.seen
                if method == 'POST' and path.endswith('os-volume_attachments')]

    def test_modes_sent_at_2_105_and_read_back(self):
        requests = [('s1', 'v1', 'ro'), ('s2', 'v1', 'ro'), ('s1', 'v2', None)]
        replies = gophercloud_step.attach(requests)
        self.assertEqual([], gophercloud_step.reply_problems(requests,
                                                             replies))
        self.assertEqual([
            ('/compute/v2.1/servers/s1/os-volume_attachments', 'compute 2.105',
             {'volumeAttachment': {'volumeId': 'v1', 'attach_mode': 'ro'}}),
            ('/compute/v2.1/servers/s2/os-volume_attachments', 'compute 2.105',
             {'volumeAttachment': {'volumeId': 'v1', 'attach_mode': 'ro'}}),
            # No mode: no attach_mode at all, Nova's default applies.
            ('/compute/v2.1/servers/s1/os-volume_attachments', 'compute 2.105',
             {'volumeAttachment': {'volumeId': 'v2'}})],
            self.attachment_posts())

    def test_an_attachment_read_once_nova_lists_it(self):
        self.server.unlisted_gets = 1
        requests = [('s1', 'v1', 'ro')]
        self.assertEqual([{'server': 's1', 'volume': 'v1', 'requested': 'ro',
                           'attach_mode': 'ro'}],
                         gophercloud_step.attach(requests))
        gets = [path for method, path, _, _ in self.server.seen
                if method == 'GET']
        self.assertEqual(
            ['/compute/v2.1/servers/s1/os-volume_attachments/v1'] * 2, gets)

    def test_every_argument_checked_before_any_request(self):
        with self.assertRaisesRegex(Failed, 'exited 1 after 0 attachments: '
                                    'gophercloud-attach: "s2:v1:ro:x" is not '
                                    'SERVER:VOLUME'):
            gophercloud_step.attach([('s1', 'v1', 'ro'),
                                     ('s2', 'v1', 'ro:x')])
        self.assertEqual([], self.server.seen)

    def test_a_mode_listed_otherwise_is_a_problem(self):
        self.server.listed_mode = lambda mode: 'rw'
        requests = [('s1', 'v1', 'ro')]
        self.assertEqual(
            ['v1 on s1: the GET lists attach_mode rw, not ro'],
            gophercloud_step.reply_problems(
                requests, gophercloud_step.attach(requests)))

    def test_a_refused_attach_fails_the_step(self):
        with self.assertRaisesRegex(Failed, 'gophercloud-attach exited 1 '
                                    'after 1 attachments: gophercloud-attach: '
                                    'attach v1 to gone: '
                                    'want the 202 of 2.105, got .*404'):
            gophercloud_step.attach([('s1', 'v1', 'ro'), ('gone', 'v1', '')])
        self.assertEqual(2, len(self.attachment_posts()))
        # Gophercloud refuses a mode of neither kind before any request.
        with self.assertRaisesRegex(Failed, 'AttachMode must be'):
            gophercloud_step.attach([('s1', 'v1', 'rx')])
        self.assertEqual(2, len(self.attachment_posts()))


class ExitStatusTest(unittest.TestCase):
    """The step's reading of the program's exit status and lines (the
    program itself is ProgramTest's).
    """

    def run_program(self, returncode, output):
        with mock.patch.object(gophercloud_step, 'build',
                               return_value='gophercloud-attach'), \
                mock.patch.object(gophercloud_step.process, 'run',
                                  return_value=subprocess.CompletedProcess(
                                      [], returncode, stdout=output)):
            return gophercloud_step.attach([('s1', 'v1', 'ro'),
                                            ('gone', 'v1', None)])

    def test_a_failed_run_fails_with_its_error_after_its_lines(self):
        line = json.dumps({'server': 's1', 'volume': 'v1'})
        self.assertEqual([{'server': 's1', 'volume': 'v1'}],
                         self.run_program(0, line + '\n'))
        with self.assertRaisesRegex(Failed, 'exited 1 after 1 attachments: '
                                    'gophercloud-attach: attach v1 to gone'):
            self.run_program(1, f'{line}\ngophercloud-attach: attach v1 to '
                             'gone: 404\n')


class ReplyProblemsTest(unittest.TestCase):

    REQUESTS = [('s1', 'v1', 'ro'), ('s1', 'v2', None)]

    def reply(self, server, volume, mode):
        return {'server': server, 'volume': volume, 'requested': '',
                'attach_mode': mode}

    def test_each_line_against_its_request(self):
        good = [self.reply('s1', 'v1', 'ro'), self.reply('s1', 'v2', 'rw')]
        self.assertEqual([], gophercloud_step.reply_problems(self.REQUESTS,
                                                             good))
        self.assertEqual(['1 attachments printed for 2 requests'],
                         gophercloud_step.reply_problems(self.REQUESTS,
                                                         good[:1]))
        self.assertEqual(
            ['v1 on s1: printed as v1 on s2',
             'v2 on s1: the GET lists attach_mode None, not rw'],
            gophercloud_step.reply_problems(self.REQUESTS, [
                self.reply('s2', 'v1', 'ro'), self.reply('s1', 'v2', None)]))


class StepTest(unittest.TestCase):
    """The step around the program: the ledger, the checks, the detach."""

    def setUp(self):
        self.tracker = mock.Mock(servers=['a', 'b'])
        self.tracker.placements.return_value = {'a': 'mae-compute-a',
                                                'b': 'mae-compute-b'}
        self.tracker.new_volume.side_effect = lambda name: f'{name}-id'
        self.tracker.cloud.attached.return_value = {'attach_mode': 'ro'}
        self.requests = [('a', 'gophercloud-ro-id', 'ro'),
                         ('b', 'gophercloud-ro-id', 'ro'),
                         ('a', 'gophercloud-rw-id', None)]

    def run_step(self, modes, views='views'):
        replies = [{'server': server, 'volume': volume,
                    'attach_mode': listed}
                   for (server, volume, _), listed in zip(self.requests,
                                                          modes)]
        with mock.patch.object(gophercloud_step, 'attach',
                               return_value=replies), \
                mock.patch.object(gophercloud_step.attachment_checks,
                                  'check_views',
                                  side_effect=[views]) as check_views:
            try:
                return gophercloud_step.gophercloud_attach(self.tracker)
            finally:
                self.check_views = check_views

    def test_the_guests_checked_then_detached(self):
        detail = self.run_step(['ro', 'ro', 'rw'])
        self.check_views.assert_called_once_with(self.tracker, ['a', 'b'])
        self.assertIn('the GET lists ro, ro, rw; views; 3 detached', detail)
        self.assertEqual(
            [mock.call(server, volume, mode or 'rw', mock.ANY)
             for server, volume, mode in self.requests],
            self.tracker.expect.call_args_list)
        self.assertEqual([mock.call(server, volume) for server, volume, _
                          in self.requests],
                         self.tracker.detach.call_args_list)

    def test_a_mode_listed_otherwise_fails_before_the_guests(self):
        with self.assertRaisesRegex(Failed, 'gophercloud-ro-id on b: the '
                                    'GET lists attach_mode rw, not ro'):
            self.run_step(['ro', 'rw', 'rw'])
        self.check_views.assert_not_called()
        # The ledger held every attachment Nova listed, and each is
        # detached.
        self.assertEqual(3, self.tracker.expect.call_count)
        self.assertEqual(3, self.tracker.detach.call_count)

    def test_detached_when_a_guest_disagrees(self):
        with self.assertRaisesRegex(Failed, 'writable'):
            self.run_step(['ro', 'ro', 'rw'], views=Failed('writable'))
        self.assertEqual(3, self.tracker.detach.call_count)

    def test_every_attachment_detached_though_one_detach_fails(self):
        self.tracker.detach.side_effect = [Failed('timed out'), None, None]
        with self.assertRaisesRegex(Failed, 'not detached: gophercloud-ro-id '
                                    'from a: timed out'):
            self.run_step(['ro', 'ro', 'rw'])
        self.assertEqual(3, self.tracker.detach.call_count)

    def test_only_what_nova_lists_is_expected_and_detached(self):
        self.tracker.cloud.attached.side_effect = [True, None, True]
        self.run_step(['ro', 'ro', 'rw'])
        self.assertEqual(2, self.tracker.expect.call_count)
        self.assertEqual([mock.call('a', 'gophercloud-ro-id'),
                          mock.call('a', 'gophercloud-rw-id')],
                         self.tracker.detach.call_args_list)


class EnvironmentTest(base.RootTestCase):

    def test_the_member_and_nothing_of_this_process(self):
        base.fake_services(self, lambda *args: (200, {}))
        with mock.patch.dict(os.environ, {'OS_PROJECT_ID': 'theirs'}):
            env = gophercloud_step.environment()
        self.assertEqual('', env['OS_PROJECT_ID'])
        self.assertEqual((layout.MEMBER, layout.PROJECT, base.FAKE_PASSWORD),
                         (env['OS_USERNAME'], env['OS_PROJECT_NAME'],
                          env['OS_PASSWORD']))

    def test_a_mode_is_the_third_part_of_an_argument(self):
        self.assertEqual('s:v:ro', gophercloud_step.argument('s', 'v', 'ro'))
        self.assertEqual('s:v', gophercloud_step.argument('s', 'v', None))


class OneServerPerHostTest(unittest.TestCase):

    def test_the_first_server_on_each_host(self):
        tracker = mock.Mock(servers=['a', 'b', 'c'])
        tracker.placements.return_value = {
            'a': 'mae-compute-b', 'b': 'mae-compute-a', 'c': 'mae-compute-a'}
        self.assertEqual(['b', 'a'],
                         gophercloud_step.one_server_per_host(tracker))
        tracker.placements.return_value = {'a': 'mae-compute-a'}
        with self.assertRaisesRegex(Failed, 'no server on each host'):
            gophercloud_step.one_server_per_host(tracker)


if __name__ == '__main__':
    unittest.main()
