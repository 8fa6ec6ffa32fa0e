"""Tests of series.identity: placeholder identities and `sign`."""

from series import checks
from series import config
from series import identity
from series import queue
from series.tests import base


class PlaceholderTest(base.SeriesTestCase):

    def test_reserved_domains_are_placeholders(self):
        for email in ('a@users.noreply.a-seed.example', 'jane@example.com',
                      'x@host.invalid', 'x@example.org', 'x@ci.test',
                      'root@localhost'):
            self.assertTrue(identity.is_placeholder(email), email)
        for email in ('jane@redhat.com', 'x@example-corp.com',
                      'x@examples.org', 'x@openstack.org'):
            self.assertFalse(identity.is_placeholder(email), email)

    def test_check_upstream_refuses_a_placeholder_author_and_sign_off(self):
        self.make_series()  # authored and signed off at example.com
        upstream = self.quiet(checks.check_series_files, self.project,
                              upstream=True)
        self.assertEqual(4, len([p for p in upstream if 'placeholder' in p]))
        self.assertIn('author Jane Dev <jane@example.com>', upstream[0])
        # Only before pushing: the repository's own checks accept it.
        self.assertEqual([], self.quiet(checks.check_series_files,
                                        self.project))

    def test_parse(self):
        self.assertEqual(('Jane Q. Dev', 'jane@redhat.com'),
                         identity.parse(' Jane Q. Dev <jane@redhat.com>'))
        with self.assertRaises(config.SeriesError):
            identity.parse('jane@redhat.com')


class SignTest(base.SeriesTestCase):

    def test_every_commit_becomes_the_users_and_trailers_stay(self):
        self.make_series()
        self.quiet(identity.sign, self.project, 'Jane Q. Dev <jq@redhat.com>')
        authors = self.git('log', '--format=%an <%ae>', 'base..HEAD')
        self.assertEqual(['Jane Q. Dev <jq@redhat.com>'] * 2,
                         authors.splitlines())
        message = self.git('log', '-1', '--format=%B')
        self.assertIn('Partially-Implements: blueprint volume-multiattach-'
                      'enhancements\nSigned-off-by: Jane Q. Dev '
                      '<jq@redhat.com>\n', message)
        self.assertNotIn('jane@example.com', message)
        self.quiet(queue.export, self.project)
        self.assertEqual([], self.quiet(checks.check_series_files,
                                        self.project, upstream=True))

    def test_without_as_the_users_git_configuration(self):
        self.make_series()
        self.git('config', 'user.name', 'Jo Dev')
        self.git('config', 'user.email', 'jo@redhat.com')
        self.quiet(identity.sign, self.project)
        self.assertEqual(['Jo Dev <jo@redhat.com>'] * 2, self.git(
            'log', '--format=%an <%ae>', 'base..HEAD').splitlines())

    def test_a_placeholder_identity_is_refused_and_nothing_changes(self):
        self.make_series()
        head = self.git('rev-parse', 'HEAD')
        with self.assertRaises(config.SeriesError):
            identity.sign(self.project, 'CI <ci@host.example>')
        self.assertEqual(head, self.git('rev-parse', 'HEAD'))
