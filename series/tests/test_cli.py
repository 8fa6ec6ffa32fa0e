"""Tests of series.cli: the parser and the dispatch to one function per
verb; and of series.cloud.cli, the dispatch of `cloud`'s actions.
"""

import contextlib
import io
import unittest
from unittest import mock

from series import cli
from series.cloud import cli as cloud_cli
from series import config


class BuildParserTest(unittest.TestCase):

    def test_every_verb_has_its_function(self):
        parser = cli.build_parser()
        verbs = parser._subparsers._group_actions[0].choices
        self.assertIn('each', verbs)
        for name, sub in verbs.items():
            self.assertTrue(callable(sub.get_default('func')), name)

    def test_help_is_the_list_of_verbs(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit):
            cli.build_parser().parse_args(['--help'])
        verbs = cli.build_parser()._subparsers._group_actions[0].choices
        for name in verbs:
            self.assertIn(f'\n    {name} ', out.getvalue())


class MainTest(unittest.TestCase):

    def test_a_verb_runs_its_function_with_the_project(self):
        with mock.patch.object(cli.queue, 'export') as export:
            self.assertEqual(0, cli.main(['export', 'cinder']))
        self.assertEqual('cinder', export.call_args.args[0].name)

    def test_sign_as_someone(self):
        with mock.patch.object(cli.identity, 'sign') as sign:
            self.assertEqual(0, cli.main(['sign', 'cinder', '--as',
                                          'Jo Dev <jo@redhat.com>']))
            cli.main(['sign', 'cinder'])
        self.assertEqual([('cinder', 'Jo Dev <jo@redhat.com>'),
                          ('cinder', None)],
                         [(call.args[0].name, call.args[1])
                          for call in sign.call_args_list])

    def test_a_test_module_names_nova_as_the_project(self):
        with mock.patch.object(cli.suites, 'test', return_value=[]) as test, \
                mock.patch.object(cli.suites, 'print_summary',
                                  return_value=0):
            cli.main(['test', 'nova.tests.unit.test_x'])
        self.assertEqual('nova', test.call_args.args[0].name)
        self.assertEqual(['nova.tests.unit.test_x'],
                         test.call_args.kwargs['filters'])

    def test_an_error_is_said_and_exits_2(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(2, cli.main(['rebase', 'cinder']))
        self.assertIn('rebase needs the VERSION', err.getvalue())

    def test_an_unknown_project_exits_2(self):
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(2, cli.main(['export', 'glance']))


class CloudCliTest(unittest.TestCase):
    """`cloud ACTION` runs its function; scenario, upgrade and status give
    the exit status their function returns, up and down 0 (they raise on
    failure).
    """

    def test_each_action_runs_its_function(self):
        with mock.patch.object(cloud_cli.deploy, 'up') as up, \
                mock.patch.object(cloud_cli.deploy, 'down') as down, \
                mock.patch.object(cloud_cli.deploy, 'status'), \
                mock.patch.object(cloud_cli.deploy, 'print_status',
                                  return_value=3), \
                mock.patch.object(cloud_cli.scenario, 'main',
                                  return_value=1), \
                mock.patch.object(cloud_cli.upgrade, 'main',
                                  return_value=0):
            self.assertEqual(
                [0, 0, 3, 1, 0],
                [cloud_cli.main(action) for action in
                 ('up', 'down', 'status', 'scenario', 'upgrade')])
        up.assert_called_once_with()
        down.assert_called_once_with()


class PythonOnlyTest(unittest.TestCase):

    def test_a_verb_of_python_projects_refuses_a_go_module(self):
        project = config.Project(name='gophercloud', version='v2.16.0',
                                 kind='go', module='example.com/m',
                                 h1='h1:x=')
        with mock.patch.object(config, 'get_project', return_value=project), \
                mock.patch('sys.stderr', new_callable=io.StringIO) as err:
            self.assertEqual(2, cli.main(['contract', 'gophercloud']))
        self.assertIn('`contract` does not take a go project (gophercloud)',
                      err.getvalue())
