"""Tests of series.cloud.osc_functional: the `openstack` command the
functional tests run finds the cloud's clouds.yaml, and the selection
holds every functional test python-openstackclient's series adds.
"""

from series.cloud import layout
from series.cloud import osc_functional
from series.tests import base


class OscFunctionalTest(base.RootTestCase):

    def test_the_clouds_yaml_is_where_the_openstack_command_reads_it(self):
        clouds = layout.clouds_yaml()
        home = osc_functional.config_home(clouds)
        env = osc_functional.environment(home)
        # The tests run `openstack` without any OS_* variable.
        self.assertEqual(['OS_ADMIN_CLOUD'],
                         [key for key in env if key.startswith('OS_')])
        copied = home / 'openstack' / 'clouds.yaml'
        self.assertEqual(str(home), env['XDG_CONFIG_HOME'])
        self.assertEqual(clouds.read_text(), copied.read_text())
        self.assertEqual(0o600, copied.stat().st_mode & 0o777)
        self.assertIn(f'  {env["OS_ADMIN_CLOUD"]}:\n', copied.read_text())

    def test_it_selects_every_functional_test_of_the_series(self):
        base.assert_selects_functional_tests_added(
            self, 'python-openstackclient', osc_functional.TESTS, 3,
            'openstackclient.tests.functional.compute.v2.test_server.'
            'ServerTests.test_server_add_remove_volume')

    def test_its_run_is_read_from_a_repository_of_its_own(self):
        base.assert_a_repository_of_its_own(self, osc_functional.run)
