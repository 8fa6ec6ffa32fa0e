"""A client's refusals run against the released library its series needs.

python-openstackclient's series requires openstacksdk's patched tree: an
openstacksdk without its series drops the attach mode and attaches the
volume read/write. The client refuses the mode then, and the tests that
say so must pass against the library as released, not only against a
patched one made to look released. They run with the project's own
virtualenv and the library's pristine release (the verified sdist,
unpacked) first on sys.path, in place of the patched tree the
virtualenv installs.
"""

import os

from series import config
from series import pristine
from series import process
from series import suites
from series import virtualenvs


def import_location(python, package, env):
    """Where `package` is imported from with `env`."""
    proc = process.run([python, '-c', f'import {package}; '
                        f'print({package}.__file__)'], env=env)
    return proc.stdout.strip()


def run(project, requirement_name, tests):
    """Run `tests` of `project` against the release of `requirement_name`;
    a SuiteResult that fails unless the release was the one imported and
    every test ran and passed.
    """
    requirement = config.get_project(requirement_name)
    released = pristine.unpack_pristine(requirement)
    python = virtualenvs.ensure_venv(project)
    env = dict(os.environ, PYTHONPATH=str(released),
               OS_STDOUT_CAPTURE='1', OS_STDERR_CAPTURE='1')
    name = (f'{project.name} against {requirement.name} '
            f'{requirement.version} as released')
    location = import_location(python, requirement.package, env)
    if not location.startswith(f'{released}{os.sep}'):
        result = suites.SuiteResult(name=name)
        result.fail(f'{requirement.package} was imported from {location}, '
                    f'not from its release in {released}')
        return result
    log = config.ROOT / '.work' / 'logs' / (
        f'{project.name}-released-{requirement.name}.log')
    log.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'{name}: {len(tests)} tests, {requirement.package} from '
                f'{location} (log: {log.relative_to(config.ROOT)})')
    result = suites.run_stestr(
        python, project.tree, [f'^{test}$' for test in tests], name=name,
        log=log, env=env, options=[f'--test-path=./{project.unit_tests}'],
        repository=config.ROOT / '.work' / 'released' / project.name,
        listed=True)
    # A skip is not a pass.
    for problem in suites.not_passed(result, tests):
        result.fail(problem)
    return result


def suite(project):
    """The SuiteResults of the project's released-requirement-tests."""
    return [run(project, name, tests) for name, tests
            in project.released_requirement_tests.items()]
