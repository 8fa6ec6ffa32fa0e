"""Tests of series.cloud.csi_sanity_step: each spec's outcome from Ginkgo's
report, the step's verdict on them, the volumes csi-sanity leaves detached
and deleted, and the plugin's services stopped and the namespace deleted
whatever fails.
"""

import json
from pathlib import Path
import re
import tempfile
import unittest
from unittest import mock

from series.cloud.client import Failed
from series.cloud import csi_sanity_step
from series import go_tests

REQUIRED = csi_sanity_step.REQUIRED
BUSY = csi_sanity_step.CLEANUP_BUSY
DELETE_DETACHING = (
    '            s: "DeleteVolume for volume ID v1 failed: rpc error: code = '
    'Internal desc = DeleteVolume failed with error ... got 400 instead: '
    '{\\"badRequest\\": {\\"code\\": 400, \\"message\\": \\"Invalid volume: '
    'Volume status must be available or error\\"}}",')
UNPUBLISH_DELETING = (
    '            s: "ControllerUnpublishVolume for volume ID v1 failed: rpc '
    'error: code = Internal desc = ControllerUnpublishVolume Detach Volume '
    'failed with error can not detach volume s, its status is deleting",')
UNPUBLISH_REFUSED = (
    '            s: "ControllerUnpublishVolume for volume ID v1 failed: rpc '
    'error: code = Internal desc = the plugin broke",')


def spec(leaf, state='passed', node=None, message='', containers=(
        'Controller Service [Controller Server]', 'ControllerPublishVolume')):
    found = {'ContainerHierarchyTexts': list(containers),
             'LeafNodeText': leaf, 'LeafNodeType': 'It', 'State': state,
             'NumAttempts': 1}
    if node:
        found['Failure'] = {'FailureNodeType': node, 'Message': message}
    return found


def cleanup_failure(*errors):
    return ('resource cleanup failed\nExpected\n    <[]error | len:2>: [\n' +
            '\n'.join(errors) + '\n    ]\nto be empty')


class OutcomeTest(unittest.TestCase):

    def test_passed_skipped_and_pending_are_their_states(self):
        for state in ('passed', 'skipped', 'pending'):
            self.assertEqual(state, csi_sanity_step.outcome(
                spec('x', state)))

    def test_a_spec_passed_on_a_retry_says_so(self):
        retried = dict(spec('x'), NumAttempts=2)
        self.assertEqual('passed on attempt 2',
                         csi_sanity_step.outcome(retried))

    def test_a_cleanup_that_found_cinder_busy_is_recorded_not_failed(self):
        self.assertEqual(BUSY, csi_sanity_step.outcome(spec(
            'x', 'failed', 'AfterEach',
            cleanup_failure(UNPUBLISH_DELETING, DELETE_DETACHING))))

    def test_a_cleanup_with_another_error_fails(self):
        result = csi_sanity_step.outcome(spec(
            'x', 'failed', 'AfterEach',
            cleanup_failure(UNPUBLISH_REFUSED, DELETE_DETACHING)))
        self.assertTrue(result.startswith('failed in AfterEach'), result)

    def test_a_failed_body_fails_whatever_its_message(self):
        result = csi_sanity_step.outcome(spec(
            'x', 'failed', 'It', cleanup_failure(DELETE_DETACHING)))
        self.assertTrue(result.startswith('failed in It'), result)

    def test_a_cleanup_failure_without_errors_fails(self):
        result = csi_sanity_step.outcome(spec(
            'x', 'failed', 'AfterEach', 'resource cleanup failed'))
        self.assertTrue(result.startswith('failed in AfterEach'), result)

    def test_the_required_name_is_the_containers_and_the_leaf(self):
        self.assertEqual(REQUIRED, go_tests.spec_name(spec(
            'should fail when the volume is already published but is '
            'incompatible')))


class SpecProblemsTest(unittest.TestCase):

    def test_the_required_spec_passed_or_its_cleanup_found_cinder_busy(self):
        for outcome in ('passed', 'passed on attempt 2', BUSY):
            self.assertEqual([], csi_sanity_step.spec_problems(
                {REQUIRED: outcome, 'other': 'passed', 'more': 'skipped'}))

    def test_the_required_spec_skipped_fails(self):
        # Released cinder-csi advertises no PUBLISH_READONLY: csi-sanity
        # skips the spec.
        [problem] = csi_sanity_step.spec_problems({REQUIRED: 'skipped',
                                                   'other': 'passed'})
        self.assertIn('did not run and pass (skipped)', problem)
        [problem] = csi_sanity_step.spec_problems({'other': 'passed'})
        self.assertIn('(absent)', problem)

    def test_a_failed_spec_fails(self):
        self.assertEqual(['other: failed in It: boom'],
                         csi_sanity_step.spec_problems({
                             REQUIRED: 'passed',
                             'other': 'failed in It: boom'}))

    def test_a_skipped_spec_that_ran_fails(self):
        leaf = next(iter(csi_sanity_step.SKIPPED))
        [problem] = csi_sanity_step.spec_problems({
            REQUIRED: 'passed', f'Controller Service {leaf}': 'passed'})
        self.assertIn('ran, though skipped', problem)


class SkipReasonsTest(unittest.TestCase):

    def test_the_specs_the_step_skipped_with_why(self):
        leaf, why = next(iter(csi_sanity_step.SKIPPED.items()))
        self.assertEqual({f'Controller Service {leaf}': why},
                         csi_sanity_step.skip_reasons({
                             f'Controller Service {leaf}': 'skipped',
                             'Controller Service other': 'skipped',
                             REQUIRED: 'passed'}))

    def test_a_spec_the_step_skips_that_ran_has_no_reason(self):
        leaf = next(iter(csi_sanity_step.SKIPPED))
        for outcome in ('passed', 'failed in It: boom'):
            self.assertEqual({}, csi_sanity_step.skip_reasons({
                f'Controller Service {leaf}': outcome}))


class FakeCloud:
    """Cinder's volumes by id; detach empties a volume's attachments."""

    def __init__(self, volumes):
        self.volumes = volumes
        self.detached = []
        self.deleted = []
        self.member = mock.Mock()
        self.member.get.side_effect = self.list_volumes
        self.member.call.side_effect = self.delete

    def list_volumes(self, service, path):
        listed = list(self.volumes.values())
        # Cinder finishes deleting a volume it was deleting.
        for volume in listed:
            if volume['status'] == 'deleting':
                del self.volumes[volume['id']]
        return {'volumes': listed}

    def volume_path(self, suffix=''):
        return f'/volumes{suffix}'

    def detach(self, server_id, volume_id):
        self.detached.append((server_id, volume_id))
        self.volumes[volume_id]['attachments'] = []

    def wait_volume(self, volume_id, statuses):
        if self.volumes[volume_id]['attachments']:
            raise Failed(f'{volume_id} is attached')

    def delete(self, method, service, path, expect):
        volume_id = path.rpartition('/')[2]
        self.deleted.append(volume_id)
        del self.volumes[volume_id]


class DeleteSanityVolumesTest(unittest.TestCase):

    def test_csi_sanitys_volumes_detached_and_deleted_the_rest_left(self):
        cloud = FakeCloud({
            'a': {'id': 'a', 'name': 'sanity-controller-a',
                  'status': 'in-use',
                  'attachments': [{'server_id': 'node'}]},
            'b': {'id': 'b', 'name': 'sanity-controller-b',
                  'status': 'available', 'attachments': []},
            # Deleted by csi-sanity, not deleted again.
            'd': {'id': 'd', 'name': 'sanity-controller-d',
                  'status': 'deleting', 'attachments': []},
            # Cinder's name~= filter matches anywhere in the name.
            'c': {'id': 'c', 'name': 'mae-not-sanity-c',
                  'status': 'available', 'attachments': []}})
        self.assertEqual(['a'], csi_sanity_step.delete_sanity_volumes(cloud))
        self.assertEqual([('node', 'a')], cloud.detached)
        self.assertEqual(['a', 'b'], cloud.deleted)
        self.assertEqual(['c'], list(cloud.volumes))


class RunSanityTest(unittest.TestCase):
    """csi-sanity's command and its report's specs."""

    def test_the_controller_specs_and_their_report(self):
        def run(command, check):
            report = next(part for part in command if part.startswith(
                '--ginkgo.json-report=')).partition('=')[2]
            Path(report).write_text(json.dumps([{'SpecReports': [
                {'LeafNodeType': 'BeforeSuite', 'State': 'passed'},
                spec('x')]}]))
            return mock.Mock(returncode=0, stdout='')
        with tempfile.TemporaryDirectory() as directory, mock.patch.object(
                csi_sanity_step.process, 'run', side_effect=run) as called:
            specs = csi_sanity_step.run_sanity(
                'csi-sanity', 'node.sock', 'controller.sock',
                Path(directory))
        self.assertEqual([spec('x')], specs)
        command = called.call_args.args[0]
        self.assertIn('--csi.endpoint=unix://node.sock', command)
        self.assertIn('--csi.controllerendpoint=unix://controller.sock',
                      command)
        self.assertIn('--ginkgo.focus=Controller Service', command)
        self.assertIn('--ginkgo.flake-attempts=3', command)
        self.assertIn('--ginkgo.skip=' + '|'.join(csi_sanity_step.SKIPPED),
                      command)

    def test_each_skipped_spec_matches_only_itself(self):
        # --ginkgo.skip is a regular expression: a leaf with one of its
        # metacharacters would skip nothing, or more than itself.
        for leaf in csi_sanity_step.SKIPPED:
            self.assertEqual(re.escape(leaf).replace('\\ ', ' '), leaf)

    def test_a_run_without_a_report_fails_with_its_output(self):
        with tempfile.TemporaryDirectory() as directory, mock.patch.object(
                csi_sanity_step.process, 'run', return_value=mock.Mock(
                    returncode=2, stdout='flag provided but not defined')):
            with self.assertRaisesRegex(Failed, 'no report .exit 2.: flag'):
                csi_sanity_step.run_sanity('csi-sanity', 'n', 'c',
                                           Path(directory))


class MetadataServedTest(unittest.TestCase):

    def served(self, returncode, stdout):
        with mock.patch.object(csi_sanity_step.process, 'run',
                               return_value=mock.Mock(
                                   returncode=returncode,
                                   stdout=stdout)) as run:
            served = csi_sanity_step.metadata_served('server-1')
        command = run.call_args.args[0]
        self.assertEqual(['ip', 'netns', 'exec', csi_sanity_step.NAMESPACE,
                          'python3', '-c'], command[:6])
        self.assertIn('http://169.254.169.254/openstack/latest/'
                      'meta_data.json', command[6])
        return served

    def test_the_server_id_served_in_the_namespace(self):
        self.assertTrue(self.served(0, '{"uuid": "server-1"}'))

    def test_another_id_or_no_answer_is_not_served(self):
        self.assertFalse(self.served(0, '{"uuid": "server-2"}'))
        self.assertFalse(self.served(1, 'Connection refused server-1'))


class StepTest(unittest.TestCase):
    """The step's verdict, and whatever fails, the services stopped and
    the namespace deleted.
    """

    def run_step(self, run_sanity, left_attached=(), ready=True):
        tracker = mock.Mock()
        tracker.report.csi_sanity = None
        controller = mock.Mock(name='controller')
        controller.name = 'csi-sanity-controller'
        controller.pid.return_value = 1234 if ready else None
        controller.log_tail.return_value = 'Failed to GetOpenStackProvider'
        node = [mock.Mock(name='metadata'), mock.Mock(name='node')]
        socket = mock.Mock()
        socket.exists.return_value = ready
        namespace = []
        step = csi_sanity_step
        with mock.patch.object(step.gophercloud_step, 'one_server_per_host',
                               return_value=['node', 'other']), \
                mock.patch.object(step.cinder_csi_step, 'build',
                                  return_value=('plugin', 'client')), \
                mock.patch.object(step.cinder_csi_step, 'SOCKET_SECONDS',
                                  0.2), \
                mock.patch.object(step, 'build', return_value='sanity'), \
                mock.patch.object(step, 'delete_sanity_volumes',
                                  return_value=list(left_attached)), \
                mock.patch.object(step.layout, 'directory'), \
                mock.patch.object(step.cinder_csi_step, 'controller',
                                  return_value=(controller, socket)), \
                mock.patch.object(step, 'namespace',
                                  side_effect=namespace.append), \
                mock.patch.object(step.process, 'run'), \
                mock.patch.object(step, 'metadata_served',
                                  return_value=True), \
                mock.patch.object(step, 'node_services',
                                  return_value=(node, socket)), \
                mock.patch.object(step, 'run_sanity',
                                  side_effect=run_sanity), \
                mock.patch.object(step.services, 'stop_all') as stop_all:
            try:
                detail = step.csi_sanity(tracker)
            except Failed as failure:
                detail = failure
        self.assertEqual(['delete', 'add', 'delete'], namespace)
        stop_all.assert_called_once_with([controller, *node])
        return detail, tracker.report.csi_sanity

    def required(self, state='passed', node=None, message=''):
        return lambda *args: [spec(
            'should fail when the volume is already published but is '
            'incompatible', state, node, message)]

    def test_a_run_that_passes(self):
        detail, report = self.run_step(self.required())
        self.assertIn('1 passed', detail)
        self.assertEqual({REQUIRED: 'passed'}, report['specs'])

    def test_the_report_says_why_the_step_skipped_a_spec(self):
        leaf, why = next(iter(csi_sanity_step.SKIPPED.items()))
        skipped = spec(leaf, 'skipped', containers=('Controller Service',))
        detail, report = self.run_step(
            lambda *args: [*self.required()(), skipped])
        self.assertIn('1 passed, 1 skipped', detail)
        self.assertEqual({f'Controller Service {leaf}': why},
                         report['skipped_by_the_step'])

    def test_a_run_that_raises_stops_everything(self):
        def fails(*args):
            raise Failed('csi-sanity wrote no report')
        detail, _ = self.run_step(fails)
        self.assertIn('no report', str(detail))

    def test_a_run_without_the_required_spec_fails(self):
        detail, report = self.run_step(self.required('skipped'))
        self.assertIsInstance(detail, Failed)
        self.assertIn('did not run and pass (skipped)', str(detail))
        self.assertEqual({REQUIRED: 'skipped'}, report['specs'])

    def test_a_volume_left_attached_fails(self):
        detail, report = self.run_step(self.required(), left_attached=['v'])
        self.assertIsInstance(detail, Failed)
        self.assertIn('left volumes attached: v', str(detail))

    def test_a_plugin_that_exits_fails_with_its_log(self):
        def never(*args):
            raise AssertionError('csi-sanity ran without the plugin')
        detail, _ = self.run_step(never, ready=False)
        self.assertIsInstance(detail, Failed)
        self.assertIn('csi-sanity-controller exited: Failed to '
                      'GetOpenStackProvider', str(detail))


if __name__ == '__main__':
    unittest.main()
