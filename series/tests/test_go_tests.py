"""Tests of series.go_tests: `go test -json` events judged test by test
(a skip is not a pass, a package that did not build fails), the packages
a series touches, and the real go command on a work tree of the tests'
own module: its tests, go vet and gofmt.
"""

import json
import tempfile
import unittest
from unittest import mock

from series import config
from series import each
from series import go_module
from series import go_tests
from series import process
from series import queue
from series.tests import base
from series.tests import go_fixture

PACKAGE = 'example.com/demo/testing'
# demo.go with one more function, formatted as gofmt leaves it.
TRIPLE = (go_fixture.FILES['demo.go'] +
          '\n// Triple triples.\nfunc Triple(n int) int { return 3 * n }\n')


def event(action, test=None, output=None, package=PACKAGE):
    found = {'Action': action, 'Package': package}
    if test:
        found['Test'] = test
    if output is not None:
        found['Output'] = output
    return found


class ResultsTest(unittest.TestCase):

    def test_each_top_level_test_with_its_status(self):
        results, skips = go_tests.results_of([
            event('run', 'TestA'), event('pass', 'TestA'),
            event('run', 'TestB'), event('run', 'TestB/sub'),
            event('fail', 'TestB/sub'), event('fail', 'TestB'),
            event('run', 'TestC'),
            event('output', 'TestC', '=== RUN   TestC\n'),
            event('output', 'TestC', '    demo_test.go:9: needs a cloud\n'),
            event('output', 'TestC', '--- SKIP: TestC (0.00s)\n'),
            event('skip', 'TestC'), event('fail')])
        self.assertEqual({f'{PACKAGE}.TestA': 'success',
                          f'{PACKAGE}.TestB': 'fail',
                          f'{PACKAGE}.TestC': 'skip'}, results)
        self.assertEqual({f'{PACKAGE}.TestC': 'demo_test.go:9: needs a '
                          'cloud'}, skips)

    def test_a_package_failed_without_a_failed_test_fails(self):
        # A build failure: the package fails and no test ran.
        results, _ = go_tests.results_of([
            event('output', output='demo.go:3: undefined: x\n'),
            event('fail'), event('pass', 'TestA', package='other')])
        self.assertEqual({PACKAGE: 'fail', 'other.TestA': 'success'},
                         results)

    def test_lines_that_are_not_json_are_left_out(self):
        lines = ['# example.com/demo', json.dumps(event('pass', 'TestA')),
                 '{not json']
        self.assertEqual([event('pass', 'TestA')],
                         go_tests.events('\n'.join(lines)))


class GoTreeTest(base.RootTestCase):
    """A work tree of the tests' own module, fetched by the real go
    command from a proxy directory.
    """

    def setUp(self):
        super().setUp()
        proxy = tempfile.TemporaryDirectory()
        self.addCleanup(proxy.cleanup)
        h1 = go_module.hash1(go_fixture.serve(self, proxy.name))
        self.project = config.Project(
            name='demo', version=go_fixture.VERSION, kind='go',
            module=go_fixture.MODULE, h1=h1, review='github')
        with mock.patch.object(process, 'say'):
            queue.apply(self.project)

    def change(self, files):
        for name, text in files.items():
            (self.project.tree / name).parent.mkdir(parents=True,
                                                    exist_ok=True)
            (self.project.tree / name).write_text(text)
        process.git('add', '-A', cwd=self.project.tree)
        process.git('commit', '-q', '-m', 'a change', cwd=self.project.tree,
                    env=base.AUTHOR)

    def test(self):
        with mock.patch.object(process, 'say'):
            [result] = go_tests.test(self.project)
        return result

    def test_a_work_tree_reviewed_on_github_adds_no_change_id(self):
        self.assertFalse((self.project.tree / '.git' / 'hooks' /
                          'commit-msg').exists())

    def test_the_packages_a_series_touches(self):
        self.change({'demo.go': TRIPLE,
                     'README.md': 'demo\n'})
        self.assertEqual(['.', './testing'], go_tests.packages(
            self.project.tree, ['demo.go', 'README.md', 'gone.go']))

    def test_the_tests_of_a_changed_package_pass(self):
        self.change({'demo.go': TRIPLE})
        result = self.test()
        self.assertEqual((1, 0, 0, ''), (result.passed, result.failed,
                                         result.skipped, result.error))
        self.assertEqual({f'{PACKAGE}.TestDouble': 'success'},
                         result.results)

    def test_a_failed_and_a_skipped_test_are_not_passes(self):
        self.change({'testing/more_test.go': (
            'package testing\n\nimport "testing"\n\n'
            'func TestFails(t *testing.T) { t.Fatal("no") }\n\n'
            'func TestSkips(t *testing.T) { t.Skip("needs a cloud") }\n')})
        result = self.test()
        self.assertEqual((1, 1, 1), (result.passed, result.failed,
                                     result.skipped))
        self.assertIn('needs a cloud', result.skips[f'{PACKAGE}.TestSkips'])

    def test_a_package_that_does_not_build_fails(self):
        self.change({'demo.go': 'package demo\n\nfunc Double(n int) int '
                     '{ return x }\n'})
        result = self.test()
        self.assertTrue(result.failed)
        self.assertIn(go_fixture.MODULE, result.failures()[0])

    def test_a_series_without_go_files_fails(self):
        self.change({'README.md': 'demo\n'})
        result = self.test()
        self.assertEqual('the series changes no Go package', result.error)

    def test_each_commit_alone(self):
        self.change({'demo.go': TRIPLE})
        # The second commit breaks the first's package's build alone.
        self.change({'demo.go': 'package demo\n\nfunc Double(n int) int '
                     '{ return x }\n'})
        with mock.patch.object(process, 'say'):
            rows = each.checked_rows(self.project)
        # Both packages fail: neither builds.
        self.assertEqual([('passed', 1, 0, 'clean'),
                          ('failed', 0, 2, 'failed')],
                         [(row['result'], row['passed'], row['failed'],
                           row['style']) for row in rows])
        # The module's root has no tests of its own: its testing has.
        self.assertEqual(['./testing'], rows[0]['modules'])

    def test_a_commit_of_tagged_tests_alone_is_vetted_not_run(self):
        self.change({'demo.go': TRIPLE})
        # As gophercloud's acceptance tests: a package whose tests all
        # need a build tag.
        self.change({'cloud/cloud_test.go': (
            '//go:build acceptance\n\npackage cloud\n\n'
            'import "testing"\n\n'
            'func TestCloud(t *testing.T) {}\n'),
            'cloud/cloud.go': 'package cloud\n'})
        self.project.build_tags = ('acceptance',)
        with mock.patch.object(process, 'say'):
            rows = each.checked_rows(self.project)
        self.assertEqual([('passed', 1, 0, 'clean', ['./testing']),
                          ('skipped', 0, 0, 'clean', [])],
                         [(row['result'], row['passed'], row['failed'],
                           row['style'], row['modules']) for row in rows])
        self.assertEqual(['./testing'], go_tests.with_tests(
            self.project, self.project.tree, ['./cloud', './testing']))

    def test_tests_run_by_id(self):
        self.change({'testing/more_test.go': (
            'package testing\n\nimport "testing"\n\n'
            'func TestFails(t *testing.T) { t.Fatal("no") }\n')})
        ran = go_tests.run_ids(self.project, [f'{PACKAGE}.TestDouble'],
                               'by id')
        self.assertEqual({f'{PACKAGE}.TestDouble': 'success'}, ran.results)
        self.assertEqual((1, 0, ''), (ran.passed, ran.failed, ran.error))
        absent = go_tests.run_ids(self.project, [f'{PACKAGE}.TestGone'],
                                  'by id')
        self.assertEqual({f'{PACKAGE}.TestGone': 'missing'}, absent.results)
        self.assertTrue(absent.failed)

    def test_tagged_tests_matching_a_pattern_in_an_environment(self):
        # As gophercloud's acceptance tests: built with a tag, configured
        # by variables; one skips without them.
        self.change({'testing/cloud_test.go': (
            '//go:build acceptance\n\npackage testing\n\n'
            'import (\n\t"os"\n\t"testing"\n)\n\n'
            'func TestCloudAttach(t *testing.T) {\n'
            '\tif os.Getenv("OS_AUTH_URL") == "" {\n'
            '\t\tt.Skip("OS_AUTH_URL is not set")\n\t}\n}\n\n'
            'func TestCloudOther(t *testing.T) '
            '{ t.Fatal("not asked for") }\n')})
        log = self.root / 'acceptance.log'

        def run(env):
            return go_tests.run_matching(
                self.project, './testing', '^TestCloudAttach$', 'cloud',
                ('acceptance',), env, log, '1m')
        ran = run({'OS_AUTH_URL': 'http://cloud'})
        self.assertEqual({f'{PACKAGE}.TestCloudAttach': 'success'},
                         ran.results)
        self.assertEqual((1, 0, 0), (ran.passed, ran.failed, ran.skipped))
        self.assertIn('TestCloudAttach', log.read_text())
        skipped = run({})
        self.assertEqual((0, 0, 1), (skipped.passed, skipped.failed,
                                     skipped.skipped))
        self.assertEqual({f'{PACKAGE}.TestCloudAttach':
                          'cloud_test.go:12: OS_AUTH_URL is not set'},
                         skipped.skips)
        # Without the tag nothing is selected: no test run fails.
        untagged = go_tests.run_matching(
            self.project, './testing', '^TestCloudAttach$', 'cloud', (),
            {'OS_AUTH_URL': 'http://cloud'}, log, '1m')
        self.assertTrue(untagged.failed)

    def test_go_vet_builds_with_the_projects_tags(self):
        self.change({'testing/cloud_test.go': (
            '//go:build acceptance\n\npackage testing\n\n'
            'import (\n\t"fmt"\n\t"testing"\n)\n\n'
            'func TestCloud(t *testing.T) { fmt.Printf("%d", "x") }\n')})
        with mock.patch.object(process, 'say'):
            untagged = go_tests.lint(self.project)
            self.project.build_tags = ('acceptance',)
            tagged = go_tests.lint(self.project)
        self.assertEqual('success', untagged.results['go vet'])
        self.assertEqual('fail', tagged.results['go vet'])
        self.assertIn('cloud_test.go', tagged.error)

    def test_gofmt_and_go_vet_of_the_changed_files(self):
        self.change({'demo.go': TRIPLE})
        with mock.patch.object(process, 'say'):
            clean = go_tests.lint(self.project)
        self.assertEqual((2, 0), (clean.passed, clean.failed))
        self.change({'demo.go': 'package demo\n\nfunc Double(n int) int '
                     '{ return  2*n }\n'})
        with mock.patch.object(process, 'say'):
            unformatted = go_tests.lint(self.project)
        self.assertEqual({'gofmt': 'fail', 'go vet': 'success'},
                         unformatted.results)
        self.assertIn('gofmt: demo.go', unformatted.error)


if __name__ == '__main__':
    unittest.main()
