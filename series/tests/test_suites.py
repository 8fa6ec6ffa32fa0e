"""Tests of series.suites: this repository's own tests, the summary
table, each selected entry run, and what a stestr run reports.
"""

import contextlib
import io
import os
from pathlib import Path
import tempfile
import unittest
from unittest import mock

from series import config
from series import process
from series import suites


class ToolSelfTestTest(unittest.TestCase):

    def test_counts_come_from_unittest_totals(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / 'tests').mkdir()
            (Path(tmp) / 'tests' / 'test_sample.py').write_text(
                'import sys, unittest\n\n\n'
                'class T(unittest.TestCase):\n'
                '    def test_prints(self):\n'
                '        sys.stderr.write("no newline")\n\n'
                '    def test_fails(self):\n'
                '        self.fail()\n\n'
                '    @unittest.skip("why")\n'
                '    def test_skipped(self):\n'
                '        pass\n')
            with mock.patch.object(config, 'ROOT', Path(tmp)), \
                    contextlib.redirect_stdout(io.StringIO()):
                result = suites.tool_self_test('tests', 'sample',
                                               top_level=None)
        self.assertEqual((1, 1, 1),
                         (result.passed, result.failed, result.skipped))


class SummaryTest(unittest.TestCase):

    def test_last_line_is_the_totals(self):
        out = io.StringIO()
        results = [suites.SuiteResult('a', passed=3, failed=1, skipped=2),
                   suites.SuiteResult('b', passed=4)]
        with contextlib.redirect_stdout(out):
            code = suites.print_summary(results, started=0)
        self.assertEqual(1, code)
        self.assertEqual('7 passed, 1 failed', out.getvalue().splitlines()[-1])

    def test_the_failed_suites_are_named_above_the_totals(self):
        out = io.StringIO()
        results = [suites.SuiteResult('a', passed=1, failed=1,
                                      results={'t.ok': 'success',
                                               't.bad': 'fail'}),
                   suites.SuiteResult('b', failed=1, error='no tree'),
                   suites.SuiteResult('c', passed=2)]
        with contextlib.redirect_stdout(out):
            suites.print_totals(results)
        self.assertEqual(['FAILED a: t.bad', 'FAILED b: no tree',
                          '3 passed, 2 failed'],
                         out.getvalue().splitlines())

    def test_long_names_keep_the_columns(self):
        out = io.StringIO()
        results = [suites.SuiteResult('a', passed=1),
                   suites.SuiteResult('python-openstackclient series check',
                                      passed=1)]
        with contextlib.redirect_stdout(out):
            suites.print_summary(results, started=0)
        rows = out.getvalue().splitlines()[1:4]
        self.assertEqual(len(rows[0]), len(rows[1]))
        self.assertEqual(len(rows[0]), len(rows[2]))


class RequireEachSelectedTest(unittest.TestCase):

    def test_an_entry_that_ran_no_test_fails_the_run(self):
        ran = {'pkg.test_x.C.test_a': 'success'}
        result = suites.SuiteResult('unit', passed=1, results=dict(ran))
        suites.require_each_selected(result, [r'^pkg\.test_x\.C\.test_a$'])
        self.assertEqual(0, result.failed)
        # The regex of a method entry that wants a dot after it: nothing.
        suites.require_each_selected(result, [r'^pkg\.test_x\.C\.test_a\.'])
        self.assertEqual(1, result.failed)
        self.assertIn('ran no test', result.error)


class SubunitResultsTest(unittest.TestCase):

    def test_ids_with_tags_holding_commas(self):
        with tempfile.TemporaryDirectory() as tmp:
            bin_dir = Path(tmp)
            # `stestr history show 3 --subunit`: the run asked for exists.
            (bin_dir / 'python').write_text(
                '#!/bin/sh\n[ "$7" = 3 ] || exit 1\n')
            # What subunit2csv prints for tempest: quoted ids whose tags
            # hold commas.
            (bin_dir / 'subunit2csv').write_text(
                '#!/bin/sh\ncat <<EOF\n'
                'test,status,start_time,stop_time\n'
                '"tempest.a.T.test_x[id-1,negative]",success,1,2\n'
                '"tempest.a.T.test_y[id-2,multiattach]",skip,1,2\n'
                'nova.tests.T.test_z,fail,1,2\n'
                'nova.tests.T.test_w,exists,,\n'
                'EOF\n')
            for script in ('python', 'subunit2csv'):
                (bin_dir / script).chmod(0o755)
            results = suites.read_subunit_results(bin_dir / 'python', tmp, 3)
            missing = suites.read_subunit_results(bin_dir / 'python', tmp, 4)
        self.assertEqual({'tempest.a.T.test_x': 'success',
                          'tempest.a.T.test_y': 'skip',
                          'nova.tests.T.test_z': 'fail'}, results)
        self.assertIsNone(missing)


def reniced(nice):
    """The nice value of a command `background()` starts from a process
    at `nice`: at most 19, the lowest priority (as when CI runs the tool
    tests in a background lane).
    """
    return min(nice + process.BACKGROUND_NICE, 19)


def stestr_python():
    """A virtualenv's python of this checkout with stestr and subunit2csv,
    or None.
    """
    for python in sorted(config.ROOT.glob('.work/venvs/*/bin/python')):
        if all((python.parent / tool).exists()
               for tool in ('stestr', 'subunit2csv')):
            return python
    return None


SAMPLE = """\
import unittest


class T(unittest.TestCase):

    def test_a(self):
        pass

    @unittest.skip('why')
    def test_b(self):
        pass
"""


@unittest.skipUnless(stestr_python(), 'no virtualenv with stestr')
class RunStestrTest(unittest.TestCase):
    """suites.run_stestr with the real stestr, on a package of two tests:
    what it returns is the run it made, never an earlier one.
    """

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tree = Path(tmp.name)
        (self.tree / 'pkg').mkdir()
        (self.tree / 'pkg' / '__init__.py').write_text('')
        (self.tree / 'pkg' / 'test_sample.py').write_text(SAMPLE)
        (self.tree / '.stestr.conf').write_text(
            '[DEFAULT]\ntest_path=./pkg\ntop_dir=./\n')

    def run_stestr(self, filters, **kwargs):
        return suites.run_stestr(
            stestr_python(), self.tree, filters, name='sample',
            log=self.tree / 'log', env=dict(os.environ), **kwargs)

    def test_a_run_that_records_nothing_fails_in_the_trees_repository(self):
        first = self.run_stestr(['test_'])
        self.assertEqual((1, 0, 1), (first.passed, first.failed,
                                     first.skipped))
        self.assertEqual({'pkg.test_sample.T.test_a': 'success',
                          'pkg.test_sample.T.test_b': 'skip'}, first.results)
        self.assertEqual({'pkg.test_sample.T.test_b': 'why'}, first.skips)
        # A regex that matches nothing: stestr exits 1 and records no run;
        # `stestr last` would show the first run's passes.
        second = self.run_stestr(['matches_nothing'])
        self.assertEqual((0, {}), (second.passed, second.results))
        self.assertGreaterEqual(second.failed, 1)
        self.assertIn('recorded no run', second.error)

    def test_each_run_in_a_repository_of_its_own(self):
        repository = self.tree / 'runs'
        first = self.run_stestr(['test_'], repository=repository,
                                listed=True)
        self.assertEqual((1, 0, 1), (first.passed, first.failed,
                                     first.skipped))
        self.assertFalse((self.tree / '.stestr').exists())
        second = self.run_stestr(['matches_nothing'], repository=repository)
        self.assertEqual((0, {}), (second.passed, second.results))
        self.assertGreaterEqual(second.failed, 1)

    def test_an_import_error_at_listing_fails(self):
        self.run_stestr(['test_'])
        (self.tree / 'pkg' / 'test_broken.py').write_text(
            'import a_module_that_is_not_there\n')
        for listed in (False, True):
            result = self.run_stestr(['test_'], listed=listed)
            self.assertEqual((0, {}), (result.passed, result.results))
            self.assertGreaterEqual(result.failed, 1, listed)

    def test_a_background_run_runs_its_tests_reniced(self):
        # The test passes only where it runs at the background priority.
        (self.tree / 'pkg' / 'test_nice.py').write_text(
            'import os\nimport unittest\n\n\n'
            'class N(unittest.TestCase):\n\n'
            '    def test_nice(self):\n'
            '        self.assertEqual('
            f'{reniced(os.nice(0))}, os.nice(0))\n')
        self.assertEqual(
            {'pkg.test_nice.N.test_nice': 'success'},
            self.run_stestr(['test_nice'], background=True).results)
        self.assertEqual(
            {'pkg.test_nice.N.test_nice': 'failure'},
            self.run_stestr(['test_nice']).results)


class JudgeTest(unittest.TestCase):
    """suites.judge: what one stestr run's exit status and results make
    of its SuiteResult.
    """

    def judge(self, returncode, results, listed=None):
        return suites.judge(suites.SuiteResult('run'), returncode, results,
                            listed)

    def test_every_selected_test_passed_or_skipped(self):
        result = self.judge(0, {'m.T.test_a': 'success',
                                'm.T.test_b': 'skip'},
                            ['m.T.test_a', 'm.T.test_b'])
        self.assertEqual((1, 0, 1, ''), (result.passed, result.failed,
                                         result.skipped, result.error))

    def test_a_failed_test(self):
        result = self.judge(1, {'m.T.test_a': 'fail', 'm.T.test_b': 'success'})
        self.assertEqual((1, 1), (result.passed, result.failed))
        self.assertEqual(['m.T.test_a'], result.failures())

    def test_non_zero_exit_without_a_failed_test_fails(self):
        result = self.judge(1, {'m.T.test_a': 'success'})
        self.assertEqual((1, 1), (result.passed, result.failed))
        self.assertIn('exited 1', result.error)

    def test_no_run_recorded_fails(self):
        result = self.judge(1, None, ['m.T.test_a'])
        self.assertEqual((0, 1, {}), (result.passed, result.failed,
                                      result.results))

    def test_zero_tests_fail(self):
        for returncode in (0, 1):
            result = self.judge(returncode, {}, [])
            self.assertEqual((0, 1), (result.passed, result.failed))
            self.assertIn('no test ran', result.error)

    def test_a_selected_test_missing_from_the_run_fails(self):
        result = self.judge(0, {'m.T.test_a': 'success'},
                            ['m.T.test_a', 'm.T.test_b'])
        self.assertEqual((1, 1), (result.passed, result.failed))
        self.assertEqual('missing', result.results['m.T.test_b'])
        self.assertIn('m.T.test_b', result.failures())
        self.assertIn('1 selected tests not in the run', result.error)

    def test_the_tests_of_a_class_skipped_as_a_whole_are_skipped(self):
        result = suites.SuiteResult('run', skips={
            'setUpClass (m.Skipped)': 'microversion out of range'})
        suites.judge(result, 0, {'setUpClass (m.Skipped)': 'skip',
                                 'm.T.test_a': 'success'},
                     ['m.T.test_a', 'm.Skipped.test_x', 'm.Skipped.test_y'])
        self.assertEqual((1, 0, 2), (result.passed, result.failed,
                                     result.skipped))
        self.assertEqual({'m.T.test_a': 'success', 'm.Skipped.test_x': 'skip',
                          'm.Skipped.test_y': 'skip'}, result.results)
        self.assertEqual('microversion out of range',
                         result.report()['skips']['m.Skipped.test_x'])

    def test_a_class_that_failed_to_set_up_fails(self):
        result = self.judge(1, {'setUpClass (m.Broken)': 'fail'},
                            ['m.Broken.test_x'])
        self.assertEqual((0, 2), (result.passed, result.failed))
        self.assertEqual(['m.Broken.test_x', 'setUpClass (m.Broken)'],
                         result.failures()[:2])

    def test_report_lists_each_test_with_its_status(self):
        result = self.judge(1, {'m.T.test_a': 'success', 'm.T.test_b': 'skip'},
                            ['m.T.test_a', 'm.T.test_b', 'm.T.test_c'])
        report = result.report()
        self.assertEqual({'m.T.test_a': 'success', 'm.T.test_b': 'skip',
                          'm.T.test_c': 'missing'}, report['tests'])
        self.assertEqual((1, 1, 1), (report['passed'], report['failed'],
                                     report['skipped']))
        self.assertEqual('m.T.test_c', report['failures'][0])


class NotPassedTest(unittest.TestCase):

    def result(self, results):
        return suites.SuiteResult('run', results=results)

    def test_each_named_test_passed(self):
        self.assertEqual([], suites.not_passed(self.result({
            'm.A.test_x': 'success', 'm.B.test_y': 'success',
            'm.C.test_z': 'skip'}), ('m.A.', 'm.B.')))

    def test_a_skipped_test_did_not_pass(self):
        self.assertEqual(['m.B.test_y skip'], suites.not_passed(self.result({
            'm.A.test_x': 'success', 'm.B.test_y': 'skip'}),
            ('m.A.', 'm.B.')))

    def test_a_class_not_in_the_run_did_not_pass(self):
        self.assertEqual(['no test m.B.* ran'], suites.not_passed(
            self.result({'m.A.test_x': 'success',
                         'setUpClass (m.B)': 'skip'}), ('m.A.', 'm.B.')))

    def test_a_missing_test_did_not_pass(self):
        self.assertEqual(['m.A.test_x missing'], suites.not_passed(
            self.result({'m.A.test_x': 'missing'}), ('m.A.',)))


class SkippedLineTest(unittest.TestCase):

    def test_skip_reason_from_stestr_output(self):
        line = ('{0} tempest.api.compute.volumes.test_attach_volume.'
                'AttachVolumeMultiAttachTest.test_boot_from_multiattach_'
                'volume_direct_lun[id-1,multiattach] ... SKIPPED: '
                'hw_scsi_model=virtio-scsi not supported\n')
        self.assertEqual(
            ('tempest.api.compute.volumes.test_attach_volume.'
             'AttachVolumeMultiAttachTest.test_boot_from_multiattach_'
             'volume_direct_lun', 'hw_scsi_model=virtio-scsi not supported'),
            suites.skipped(line))

    def test_skipped_class(self):
        line = ('{1} setUpClass (tempest.api.compute.admin.test_volumes_'
                'negative.UpdateMultiattachVolumeNegativeTest) ... SKIPPED: '
                'The microversion range[3.27 - latest] is out of range')
        self.assertEqual(
            ('setUpClass (tempest.api.compute.admin.test_volumes_negative.'
             'UpdateMultiattachVolumeNegativeTest)',
             'The microversion range[3.27 - latest] is out of range'),
            suites.skipped(line))

    def test_other_lines(self):
        self.assertIsNone(suites.skipped(
            '{0} tempest.api.x.Test.test_y [1.2s] ... ok'))
