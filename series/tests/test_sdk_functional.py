"""Tests of series.cloud.sdk_functional: the environment of openstacksdk's
functional tests names the clouds of the cloud's clouds.yaml.
"""

import re

from series.cloud import content
from series.cloud import layout
from series.cloud import sdk_functional
from series.tests import base


class SdkFunctionalTest(base.RootTestCase):

    def test_every_cloud_it_names_is_in_the_clouds_yaml(self):
        path = layout.clouds_yaml()
        env = sdk_functional.environment(path)
        self.assertEqual(str(path), env['OS_CLIENT_CONFIG_FILE'])
        clouds = re.findall(r'^  (\S+):$', path.read_text(), re.M)
        named = {value for key, value in env.items()
                 if key == 'OS_CLOUD' or key.endswith('_CLOUD') or
                 key.endswith('_CLOUD_ALT')}
        self.assertEqual({'mae', 'mae-admin'}, named)
        self.assertLessEqual(named, set(clouds))
        self.assertIn(env['OPENSTACKSDK_FLAVOR'],
                      [name for name, _ in content.FLAVORS])
        self.assertEqual(env['OS_CLOUD'], env['OS_TEST_CLOUD'])

    def test_it_selects_every_functional_test_of_the_series(self):
        base.assert_selects_functional_tests_added(
            self, 'openstacksdk', sdk_functional.TESTS, 7,
            'openstack.tests.functional.cloud.test_compute.TestCompute.'
            'test_attach_detach_volume')

    def test_its_run_is_read_from_a_repository_of_its_own(self):
        base.assert_a_repository_of_its_own(self, sdk_functional.run)
