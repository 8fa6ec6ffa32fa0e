"""Tests of series.ci: the standalone clone step."""

import os
import subprocess
from unittest import mock

from series import ci
from series import config
from series.tests import base


class StandaloneCloneTest(base.SeriesTestCase):
    """The CI step that runs the tool from a clone of the repository alone."""

    def commit_tool(self, script):
        tool = self.root / 'tools' / 'series'
        tool.parent.mkdir()
        tool.write_text(script)
        for args in (['init', '-q'], ['add', '-A'],
                     ['commit', '-q', '-m', 'repository']):
            subprocess.run(['git', *args], cwd=self.root, check=True,
                           env=dict(os.environ, **base.AUTHOR))

    def test_commands_run_in_a_clone_with_nothing_beside_it(self):
        # The stand-in tool records where it runs, what sits beside its
        # repository and whether a SERIES_ variable reached it; it answers
        # status and rebase as the tool does and fails the demo.
        self.commit_tool(
            'import os, sys\n'
            'from pathlib import Path\n'
            'root = Path(__file__).resolve().parents[1]\n'
            'print(sys.argv[1:], root != Path(os.environ["ORIGINAL"]),\n'
            '      sorted(p.name for p in root.parent.iterdir()),\n'
            '      [k for k in os.environ if k.startswith("SERIES_")])\n'
            'if sys.argv[1:] == ["status"]:\n'
            '    print("demo: base demo 1.0, 2 patches")\n'
            'if sys.argv[1] == "rebase":\n'
            '    print("demo: the series now applies to 2.0")\n'
            'if sys.argv[1:] == ["status", "demo"]:\n'
            '    print("demo: base demo 1.0, 2 patches")\n'
            'sys.exit(1 if sys.argv[1] == "demo" else 0)\n')
        with mock.patch.dict(os.environ, {'ORIGINAL': str(self.root),
                                          'SERIES_ROOT': str(self.root)}), \
                mock.patch.object(ci, 'REBASE_PROOF', ('demo', '2.0')):
            result = self.quiet(ci.standalone_clone,
                                config.load_projects())
        # status, the demo (fails), the rebase, then status after it,
        # which still names 1.0: the rebase did not pin 2.0.
        self.assertEqual((2, 2), (result.passed, result.failed))
        self.assertIn('tools/series demo failed', result.error)
        self.assertIn("tools/series status demo failed in a standalone "
                      "clone (exit 0; expected ['base demo 2.0 ']",
                      result.error)
        log = (self.root / '.work' / 'logs' /
               'standalone-clone.log').read_text()
        self.assertIn("['status'] True ['repository'] []", log)
        self.assertIn("['demo'] True ['repository'] []", log)
        self.assertIn("['rebase', 'demo', '2.0'] True ['repository'] []",
                      log)
