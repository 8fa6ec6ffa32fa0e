"""Tests of series.cloud.cinder_csi_step: the client program's own Go
tests against a fake CSI controller, the answers and the records judged,
and the step around the plugin (the ledger, the guests' checks, the
unpublishes, the plugin stopped) against a cloud that keeps what the
plugin's publishes did.
"""

import unittest
from unittest import mock

from series.cloud import cinder_csi_step
from series.cloud.cinder_csi_step import Call
from series.cloud.client import Failed
from series.cloud import layout
from series import go_module
from series import go_tests
from series.tests import base

READER, WRITER = cinder_csi_step.READER, cinder_csi_step.WRITER


class ProgramTest(unittest.TestCase):
    """cinder-csi-publish's Go tests: its calls and their answers against
    a fake CSI controller on a unix socket, every argument checked before
    any call, an unreachable plugin a failure.
    """

    def test_the_programs_tests_pass(self):
        proc = go_module.go('test', '-json', '-count=1', '.',
                            cwd=cinder_csi_step.PROGRAM, check=False)
        results, _ = go_tests.results_of(go_tests.events(proc.stdout))
        prefix = 'volume-multiattach.invalid/cinder-csi-publish.'
        self.assertEqual(
            {prefix + 'TestEachCallAndItsAnswer': 'success',
             prefix + 'TestEveryArgumentCheckedBeforeAnyCall': 'success',
             prefix + 'TestAnUnreachablePluginFails': 'success'}, results,
            proc.stdout[-2000:])


class CallTest(unittest.TestCase):
    """The client's lines: one answer per call, or the step fails."""

    def run_client(self, returncode, stdout):
        calls = [Call(('capabilities',)), Call(('unpublish', 'v', 'a'))]
        with mock.patch.object(cinder_csi_step.process, 'run',
                               return_value=mock.Mock(
                                   returncode=returncode,
                                   stdout=stdout)) as run:
            answers = cinder_csi_step.call('client', 'sock', calls)
        run.assert_called_once_with(
            ['client', '-endpoint', 'unix://sock', 'capabilities',
             'unpublish:v:a'], check=False)
        return answers

    def test_an_answer_per_call(self):
        self.assertEqual([{'code': 'OK'}, {'code': 'NotFound'}],
                         self.run_client(0, '{"code": "OK"}\n'
                                            '{"code": "NotFound"}\n'))

    def test_a_client_that_fails_fails_with_its_error(self):
        with self.assertRaisesRegex(Failed, 'exited 1 after 1 of 2 calls: '
                                    'the plugin is unavailable'):
            self.run_client(1, '{"code": "OK"}\nthe plugin is unavailable\n')

    def test_a_missing_answer_fails(self):
        with self.assertRaisesRegex(Failed, 'exited 0 after 1 of 2 calls'):
            self.run_client(0, '{"code": "OK"}\n')


class AnswerProblemsTest(unittest.TestCase):

    def test_each_answer_against_its_call(self):
        calls = [Call(('capabilities',)),
                 Call(('validate', 'v', READER), confirmed=True),
                 Call(('validate', 's', READER), confirmed=False),
                 Call(('publish', 'v', 'a', WRITER), 'AlreadyExists'),
                 Call(('publish', 'v', 'b', READER)),
                 Call(('publish', 'w', 'b', WRITER, 'readonly')),
                 Call(('publish', 'c', 'a', WRITER))]
        read_only = {'DevicePath': '/dev/vdb', 'ReadOnly': 'true'}
        right = [{'code': 'OK', 'capabilities': ['PUBLISH_READONLY']},
                 {'code': 'OK', 'confirmed': True},
                 {'code': 'OK', 'confirmed': False},
                 {'code': 'AlreadyExists'},
                 {'code': 'OK', 'publish_context': read_only},
                 {'code': 'OK', 'publish_context': read_only},
                 {'code': 'OK', 'publish_context': {'DevicePath': '/dev/vdc'}}]
        self.assertEqual([], cinder_csi_step.answer_problems(calls, right))
        wrong = [{'code': 'OK', 'capabilities': ['LIST_VOLUMES']},
                 {'code': 'OK', 'confirmed': False},
                 {'code': 'OK'},
                 {'code': 'OK', 'message': ''},
                 {'code': 'OK', 'publish_context': {'DevicePath': 'x'}},
                 {'code': 'OK'},
                 {'code': 'OK', 'publish_context': read_only}]
        self.assertEqual(
            ["capabilities: no PUBLISH_READONLY among ['LIST_VOLUMES']",
             f'validate:v:{READER}: confirmed False, not True',
             f'validate:s:{READER}: confirmed None, not False',
             f'publish:v:a:{WRITER}: OK, not AlreadyExists ()',
             f"publish:v:b:{READER}: publish context {{'DevicePath': 'x'}}",
             f'publish:w:b:{WRITER}:readonly: publish context {{}}',
             f'publish:c:a:{WRITER}: publish context {read_only}'],
            cinder_csi_step.answer_problems(calls, wrong))


class FakeCloud:
    """Nova's and Cinder's records of attachments, {(server, volume):
    mode}, as the plugin's publishes leave them.
    """

    def __init__(self):
        self.modes = {}
        self.cinder_modes = {}

    def attached(self, server_id, volume_id):
        mode = self.modes.get((server_id, volume_id))
        return mode and {'volumeId': volume_id, 'attach_mode': mode}

    def cinder_attachments(self, volume_id):
        return [{'instance': server_id, 'attach_mode': mode}
                for (server_id, volume), mode in self.cinder_modes.items()
                if volume == volume_id]


class AttachmentProblemsTest(unittest.TestCase):

    def test_nova_and_cinder_against_the_modes_expected(self):
        cloud = FakeCloud()
        cloud.modes = {('a', 'v'): 'ro', ('b', 'v'): 'rw', ('a', 'c'): 'rw'}
        cloud.cinder_modes = {('a', 'v'): 'ro', ('b', 'v'): 'ro',
                              ('b', 's'): 'rw'}
        self.assertEqual(
            ['v on b: Nova lists rw, not ro',
             "c on a: Cinder attachments [], not [rw]",
             's on b: attached (1 Cinder attachments), not refused'],
            cinder_csi_step.attachment_problems(cloud, {
                ('a', 'v'): 'ro', ('b', 'v'): 'ro', ('a', 'c'): 'rw',
                ('b', 's'): None}))


class StepTest(unittest.TestCase):
    """The step around the plugin, against a cloud that keeps what each
    publish and unpublish did (the plugin as released attaches rw).
    """

    def setUp(self):
        self.cloud = FakeCloud()
        self.tracker = mock.Mock(servers=['a', 'b'], cloud=self.cloud)
        self.tracker.placements.return_value = {'a': 'mae-compute-a',
                                                'b': 'mae-compute-b'}
        self.tracker.new_volume.side_effect = (
            lambda name, multiattach=True: f'{name}-id')
        self.tracker.forget.side_effect = self.forget
        self.tracker.detach.side_effect = self.forget
        self.tracker.report.cinder_csi = None
        self.service = mock.Mock()
        self.service.pid.return_value = 1
        self.service.log_tail.return_value = 'log'
        self.socket = mock.Mock()
        self.socket.exists.return_value = True
        self.views = 'views'
        self.plugin_mode = {READER: 'ro', WRITER: 'rw'}
        self.unpublish_leaves = set()
        self.released = False
        self.calls = []

    def forget(self, server_id, volume_id):
        self.cloud.modes.pop((server_id, volume_id), None)
        self.cloud.cinder_modes.pop((server_id, volume_id), None)

    def plugin(self, client, socket, calls):
        """The plugin with its series: each call's answer, and what it
        does to the cloud.
        """
        answers = []
        for call in calls:
            self.calls.append(call.argument())
            verb, *rest = call.arguments
            answer = {'call': verb, 'code': call.code}
            if verb == 'capabilities':
                answer['capabilities'] = ['PUBLISH_READONLY']
            elif verb == 'validate':
                answer['confirmed'] = call.confirmed
            elif verb == 'publish' and (call.code == 'OK' or self.released):
                volume_id, server_id, access_mode = rest[:3]
                mode = self.plugin_mode[access_mode]
                if 'readonly' in rest and not self.released:
                    mode = 'ro'
                self.cloud.modes[server_id, volume_id] = mode
                self.cloud.cinder_modes[server_id, volume_id] = mode
                answer['publish_context'] = {'DevicePath': '/dev/vdc'}
                if mode == 'ro' and not self.released:
                    answer['publish_context']['ReadOnly'] = 'true'
            elif (verb == 'unpublish' and
                  tuple(rest) not in self.unpublish_leaves):
                self.forget(rest[1], rest[0])
            answers.append(answer)
        return answers

    def run_step(self):
        with mock.patch.object(cinder_csi_step, 'build',
                               return_value=('plugin', 'client')), \
                mock.patch.object(cinder_csi_step, 'controller',
                                  return_value=(self.service, self.socket)), \
                mock.patch.object(cinder_csi_step, 'call',
                                  side_effect=self.plugin), \
                mock.patch.object(cinder_csi_step.attachment_checks,
                                  'check_views',
                                  side_effect=[self.views]) as check_views:
            try:
                return cinder_csi_step.cinder_csi(self.tracker)
            finally:
                self.check_views = check_views

    def test_published_checked_in_the_guests_then_unpublished(self):
        detail = self.run_step()
        self.check_views.assert_called_once_with(self.tracker, ['a', 'b'])
        rox, rwo = 'cinder-csi-rox-id', 'cinder-csi-rwo-id'
        pv = 'cinder-csi-ro-pv-id'
        self.assertEqual([mock.call('a', rox, 'ro', mock.ANY),
                          mock.call('b', rox, 'ro', mock.ANY),
                          mock.call('a', rwo, 'rw', mock.ANY),
                          mock.call('b', pv, 'ro', mock.ANY)],
                         self.tracker.expect.call_args_list)
        self.assertIn(f'publish:{pv}:b:{WRITER}:readonly', self.calls)
        self.assertEqual(
            [f'unpublish:{rox}:a', f'unpublish:{rox}:b',
             f'unpublish:{rwo}:a', f'unpublish:{pv}:b'], self.calls[-4:])
        self.assertEqual({}, self.cloud.modes)
        self.tracker.detach.assert_not_called()
        self.assertIn('views; all unpublished, none left', detail)
        self.assertEqual(14, len(self.tracker.report.cinder_csi['calls']))
        self.service.start.assert_called_once_with()
        self.service.stop.assert_called_once_with()

    def test_the_reader_only_publish_of_a_volume_without_multiattach(self):
        self.run_step()
        self.assertIn(f'publish:cinder-csi-single-id:b:{READER}',
                      self.calls)
        self.tracker.new_volume.assert_any_call('cinder-csi-single',
                                                multiattach=False)

    def test_a_released_plugin_attaches_rw_and_fails_before_the_guests(self):
        # Released cinder-csi: every publish attaches rw, none is refused.
        self.plugin_mode[READER] = 'rw'
        self.released = True
        with self.assertRaisesRegex(
                Failed, 'cinder-csi-rox-id on a: Nova lists rw, not ro; .*'
                'cinder-csi-single-id on b: attached'):
            self.run_step()
        self.check_views.assert_not_called()
        # What Nova listed was in the ledger, and is detached.
        self.assertEqual(5, self.tracker.expect.call_count)
        self.tracker.expect.assert_any_call('b', 'cinder-csi-single-id',
                                            'rw', mock.ANY)
        self.assertEqual(5, self.tracker.detach.call_count)
        self.assertEqual({}, self.cloud.modes)
        self.service.stop.assert_called_once_with()

    def test_detached_and_stopped_when_a_guest_disagrees(self):
        self.views = Failed('writable')
        with self.assertRaisesRegex(Failed, 'writable'):
            self.run_step()
        self.assertEqual(4, self.tracker.detach.call_count)
        self.service.stop.assert_called_once_with()

    def test_an_unpublish_that_leaves_the_attachment_fails(self):
        self.unpublish_leaves = {('cinder-csi-rox-id', 'b')}
        with self.assertRaisesRegex(
                Failed, 'cinder-csi-rox-id still attached to b'):
            self.run_step()
        self.tracker.detach.assert_called_once_with('b',
                                                    'cinder-csi-rox-id')

    def test_a_plugin_that_exits_fails_with_its_log(self):
        self.socket.exists.return_value = False
        self.service.pid.return_value = None
        # Not a wait to the timeout: the exit is noticed at once.
        with mock.patch.object(cinder_csi_step, 'SOCKET_SECONDS', 1), \
                self.assertRaisesRegex(Failed, 'the plugin exited: log'):
            self.run_step()
        self.assertEqual([], self.calls)
        self.service.stop.assert_called_once_with()


class CloudConfTest(base.RootTestCase):

    def test_the_member_who_owns_the_servers(self):
        base.fake_services(self, lambda *args: (200, {}))
        conf = cinder_csi_step.cloud_conf()
        self.assertIn(f'username = {layout.MEMBER}\n', conf)
        self.assertIn(f'tenant-name = {layout.PROJECT}\n', conf)
        self.assertIn(f'password = {base.FAKE_PASSWORD}\n', conf)
        self.assertIn(f'auth-url = {layout.url("keystone", "/v3")}\n', conf)
