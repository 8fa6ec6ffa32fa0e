"""Tests of series.go_tests: `go test -json` events judged test by test
(a skip is not a pass, a package that did not build fails), the packages
a series touches, and the real go command on a work tree of the tests'
own module: its tests, go vet and gofmt.
"""

import base64
import hashlib
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

    def test_a_commit_of_the_requirements_runs_the_series_packages(self):
        # As a dependency bump: go.mod alone, before the series' changes
        # of Go files; a package the series adds later is not the bump's.
        self.change({'go.mod': 'module example.com/demo\n\ngo 1.23\n'})
        self.change({'demo.go': TRIPLE})
        self.change({'extra/extra.go': 'package extra\n',
                     'extra/extra_test.go': (
                         'package extra\n\nimport "testing"\n\n'
                         'func TestExtra(t *testing.T) {}\n')})
        with mock.patch.object(process, 'say'):
            rows = each.checked_rows(self.project)
        self.assertEqual([('passed', 1, ['./testing']),
                          ('passed', 1, ['./testing']),
                          ('passed', 1, ['./extra'])],
                         [(row['result'], row['passed'], row['modules'])
                          for row in rows])

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


# A module that requires the tests' own module, and the series' change of
# it: it calls Triple, which only the demo module's series adds.
USER_MODULE = 'example.com/user'
USER_FILES = {
    'go.mod': f'module {USER_MODULE}\n\ngo 1.22\n\n'
              f'require {go_fixture.MODULE} {go_fixture.VERSION}\n',
    'user.go': 'package user\n\nimport "example.com/demo"\n\n'
               '// Quadruple quadruples.\n'
               'func Quadruple(n int) int {\n'
               '\treturn demo.Double(demo.Double(n))\n}\n',
}
USER_SERIES = {
    'user.go': 'package user\n\nimport "example.com/demo"\n\n'
               '// Sextuple multiplies by six.\n'
               'func Sextuple(n int) int {\n'
               '\treturn demo.Triple(demo.Double(n))\n}\n',
    'user_test.go': 'package user\n\nimport "testing"\n\n'
                    'func TestSextuple(t *testing.T) {\n'
                    '\tif Sextuple(1) != 6 {\n\t\tt.Fatal("6")\n\t}\n}\n',
}


def go_mod_hash(text):
    """go.sum's hash of a module's go.mod (dirhash.Hash1 of that file)."""
    summary = f'{hashlib.sha256(text.encode()).hexdigest()}  go.mod\n'
    return 'h1:' + base64.b64encode(
        hashlib.sha256(summary.encode()).digest()).decode()


class WorkspaceTest(base.RootTestCase):
    """A Go module with a series requirement, built by the real go command
    against the requirement's work tree.
    """

    def setUp(self):
        super().setUp()
        proxy = tempfile.TemporaryDirectory()
        self.addCleanup(proxy.cleanup)
        demo_h1 = go_module.hash1(go_fixture.serve(self, proxy.name))
        # The released module verifies its requirement, as go.sum does.
        go_sum = (f'{go_fixture.MODULE} {go_fixture.VERSION} {demo_h1}\n'
                  f'{go_fixture.MODULE} {go_fixture.VERSION}/go.mod '
                  f'{go_mod_hash(go_fixture.FILES["go.mod"])}\n')
        user_h1 = go_module.hash1(go_fixture.publish(
            proxy.name, {**USER_FILES, 'go.sum': go_sum},
            module=USER_MODULE))
        (self.root / 'projects.toml').write_text(
            f'[demo]\nkind = "go"\nmodule = "{go_fixture.MODULE}"\n'
            f'version = "{go_fixture.VERSION}"\nh1 = "{demo_h1}"\n\n'
            f'[user]\nkind = "go"\nmodule = "{USER_MODULE}"\n'
            f'version = "{go_fixture.VERSION}"\nh1 = "{user_h1}"\n'
            'series-requirements = ["demo"]\n')
        self.demo = config.get_project('demo')
        self.user = config.get_project('user')
        with mock.patch.object(process, 'say'):
            for project, files in ((self.demo, {'demo.go': TRIPLE}),
                                   (self.user, USER_SERIES)):
                queue.apply(project)
                for name, text in files.items():
                    (project.tree / name).write_text(text)
                process.git('add', '-A', cwd=project.tree)
                process.git('commit', '-q', '-m', 'a change',
                            cwd=project.tree, env=base.AUTHOR)

    def go_test(self, project):
        with mock.patch.object(process, 'say'):
            [result] = go_tests.test(project)
        return result

    def test_the_tree_builds_against_its_requirements_work_tree(self):
        result = self.go_test(self.user)
        self.assertEqual((1, 0), (result.passed, result.failed),
                         result.error)
        self.assertEqual({f'{USER_MODULE}.TestSextuple': 'success'},
                         result.results)
        self.assertIn(f'\t{self.demo.tree}\n',
                      (self.user.tree / 'go.work').read_text())

    def test_without_the_workspace_the_release_is_built(self):
        # The control: the released demo module has no Triple.
        released = config.Project(**{**vars(self.user),
                                     'series_requirements': ()})
        result = self.go_test(released)
        self.assertFalse((self.user.tree / 'go.work').exists())
        self.assertEqual({USER_MODULE: 'fail'}, result.results)
        log = config.ROOT / '.work' / 'logs' / 'user-unit.log'
        self.assertIn('undefined: demo.Triple', log.read_text())

    def test_the_workspace_is_never_part_of_a_patch(self):
        self.go_test(self.user)
        self.assertTrue((self.user.tree / 'go.work').exists())
        self.assertEqual([], queue.uncommitted(self.user.tree))

    def test_a_commit_s_worktree_gets_its_own_workspace(self):
        with mock.patch.object(process, 'say'):
            [row] = each.checked_rows(self.user)
        self.assertEqual(('passed', 1), (row['result'], row['passed']))


def ginkgo_spec(containers, leaf, state, message=None):
    spec = {'ContainerHierarchyTexts': containers, 'LeafNodeText': leaf,
            'State': state}
    if message:
        spec['Failure'] = {'Message': message}
    return spec


class GinkgoSpecsTest(unittest.TestCase):
    """The specs of a Ginkgo suite run in process, from the JSON report
    the go command's test binary writes.
    """

    def run_specs(self, specs, required=(), returncode=0):
        def go(*args, cwd, check):
            report = next(arg for arg in args
                          if arg.startswith('-ginkgo.json-report='))
            if specs is not None:
                with open(report.partition('=')[2], 'w') as out:
                    json.dump([{'SpecReports': specs}], out)
            return mock.Mock(returncode=returncode, stdout='ok')
        project = config.Project(name='demo', version='v1', kind='go',
                                 h1='h1:x')
        with mock.patch.object(go_module, 'go', side_effect=go), \
                mock.patch.object(process, 'say'):
            return go_tests.ginkgo_specs(project, './tests/sanity', required)

    def test_each_spec_with_its_state(self):
        result = self.run_specs([
            ginkgo_spec(['Controller', 'Publish'], 'publishes', 'passed'),
            ginkgo_spec(['Controller'], 'modifies', 'skipped',
                        'ModifyVolume not supported'),
            ginkgo_spec(['Node'], 'expands', 'pending'),
            ginkgo_spec(['Node'], 'stages', 'failed', 'boom')],
            returncode=1)
        self.assertEqual({'Controller Publish publishes': 'success',
                          'Controller modifies': 'skip',
                          'Node expands': 'skip', 'Node stages': 'fail'},
                         result.results)
        self.assertEqual({'Controller modifies': 'ModifyVolume not supported',
                          'Node expands': 'pending'}, result.skips)
        self.assertEqual((1, 1, 2), (result.passed, result.failed,
                                     result.skipped))

    def test_a_required_spec_must_run_and_pass(self):
        specs = [ginkgo_spec(['Controller'], 'publishes', 'passed'),
                 ginkgo_spec(['Controller'], 'conflicts', 'skipped', 'no')]
        self.assertEqual('', self.run_specs(
            specs, ['Controller publishes']).error)
        result = self.run_specs(specs, ['Controller conflicts',
                                        'Controller gone'])
        self.assertEqual('did not run and pass: Controller conflicts '
                         '(skip); Controller gone (absent)', result.error)
        self.assertTrue(result.failed)

    def test_a_run_without_a_report_fails(self):
        result = self.run_specs(None, returncode=2)
        self.assertTrue(result.failed)
        self.assertIn('no spec reported (go test exited 2)', result.error)

    def test_an_exit_status_without_a_failed_spec_fails(self):
        result = self.run_specs(
            [ginkgo_spec(['Controller'], 'publishes', 'passed')],
            returncode=1)
        self.assertIn('go test exited 1 with no spec failed', result.error)


class OwnGoProgramsTest(unittest.TestCase):
    """This repository's own Go programs (the cloud's clients, the node
    service's driver) are formatted as gofmt -s leaves them.
    """

    def test_gofmt(self):
        programs = sorted(path.parent for path in
                          (base.REPOSITORY / 'series').rglob('go.mod'))
        self.assertGreaterEqual(len(programs), 3)
        proc = process.run(['gofmt', '-l', '-s', *programs], check=False)
        self.assertEqual((0, ''), (proc.returncode, proc.stdout.strip()))
