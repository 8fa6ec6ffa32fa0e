"""Tests of series.cloud.gophercloud_acceptance: its selection holds every
acceptance test gophercloud's series adds, and its environment gives the
harness all it requires of a run, as the admin its tests need.
"""

import os
import re
import unittest
from unittest import mock

from series.cloud import gophercloud_acceptance
from series.cloud import layout
from series.tests import base

ADDED_TEST = re.compile(r'^\+func (Test\w+)\(t \*testing\.T\)', re.M)


class GophercloudAcceptanceTest(base.RootTestCase):

    def test_it_selects_every_acceptance_test_of_the_series(self):
        added = []
        for patch in sorted((base.REPOSITORY / 'patches' /
                             'gophercloud').glob('*.patch')):
            for part in patch.read_text().split('diff --git ')[1:]:
                if part.startswith('a/internal/acceptance/'):
                    added += ADDED_TEST.findall(part)
        self.assertEqual(4, len(added), added)
        pattern = re.compile(gophercloud_acceptance.TESTS)
        self.assertEqual(added, [name for name in added
                                 if pattern.search(name)])
        self.assertIsNone(pattern.search('TestVolumeAttachAttachment'))

    def test_the_harness_gets_all_it_requires_as_the_admin(self):
        cloud = mock.Mock()
        cloud.image.return_value = 'image-1'
        cloud.flavor.side_effect = lambda name: f'flavor-{name}'
        # An operator's own variables reach no test.
        with mock.patch.dict(os.environ, {'OS_PROJECT_ID': 'theirs',
                                          'OS_USERNAME': 'someone'}):
            env = gophercloud_acceptance.environment(cloud)
        self.assertEqual('', env['OS_PROJECT_ID'])
        # clients.SkipReleasesBelow fails a run without it; the tests of
        # 2.105 skip below master.
        self.assertEqual('master', env['OS_BRANCH'])
        # AcceptanceTestChoicesFromEnv fails a run without any of these,
        # or with one flavor for both.
        for name in ('OS_IMAGE_ID', 'OS_FLAVOR_ID', 'OS_FLAVOR_ID_RESIZE',
                     'OS_POOL_NAME', 'OS_EXTGW_ID', 'OS_NETWORK_NAME'):
            self.assertTrue(env[name], name)
        self.assertNotEqual(env['OS_FLAVOR_ID'], env['OS_FLAVOR_ID_RESIZE'])
        # clients.RequireAdmin skips unless the user is named admin.
        self.assertEqual(('admin', layout.password()),
                         (env['OS_USERNAME'], env['OS_PASSWORD']))
        self.assertEqual(layout.url('keystone', '/v3'), env['OS_AUTH_URL'])


if __name__ == '__main__':
    unittest.main()
