"""The nova-specs spec in specs/: its title check and its Sphinx build.

Both run with the Python of Nova's virtualenv, which has docutils and
Sphinx.
"""

import shutil
import time

from series import config
from series import process
from series import suites
from series import virtualenvs


def spec_checks(project):
    """Run specs/tests and sphinx-build -W of specs/; their SuiteResults.

    specs/tests checks the titles against the nova-specs template's and
    the line rules.
    """
    python = virtualenvs.ensure_venv(project)
    results = [suites.tool_self_test('specs/tests', 'spec title check',
                                     python=python)]
    build = config.ROOT / '.work' / 'docs' / 'specs'
    shutil.rmtree(build, ignore_errors=True)
    started = time.monotonic()
    proc = process.run([python, '-m', 'sphinx', '-W', '--keep-going', '-q',
                        '-b', 'html', 'specs', build], cwd=config.ROOT,
                       check=False)
    result = suites.SuiteResult(name='spec (sphinx -W)',
                                passed=int(proc.returncode == 0),
                                failed=int(proc.returncode != 0),
                                error=proc.stdout.strip())
    process.say(f'spec: sphinx -W '
                f'{"clean" if not result.failed else "FAILED"} in '
                f'{time.monotonic() - started:.0f}s' +
                (f'\n{proc.stdout}' if result.failed else ''))
    results.append(result)
    return results
