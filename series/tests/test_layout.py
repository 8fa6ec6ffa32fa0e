"""Tests of series.cloud.layout: the cloud's password."""

from series.cloud import layout
from series.tests import base


class PasswordTest(base.RootTestCase):

    def test_password_never_reads_as_an_option(self):
        # A password such as '-dSL...' made keystone-manage's argument
        # parser fail (exit 2) in CI.
        for _ in range(200):
            (layout.directory() / 'password').unlink(missing_ok=True)
            self.assertRegex(layout.password(), r'^[0-9a-f]{32}$')
