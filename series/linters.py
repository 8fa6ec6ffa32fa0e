"""The static checks, each counted as a suites.SuiteResult: flake8 (with
the project's hacking checks) and the project's other lint commands on
the files the series changes, mypy as the project's tox runs it, and
flake8 on this repository's own Python.
"""

import sys

from series import config
from series import process
from series import queue
from series import selection
from series import suites
from series import virtualenvs


def lint(project):
    """flake8 (with the project's hacking checks) on the changed files,
    then the project's other style checks (projects.toml lint-commands,
    where {files} stands for the changed Python files).
    """
    queue.ensure_tree(project)
    python = virtualenvs.ensure_venv(project)
    tree = project.tree
    files = [f for f in selection.changed_files(tree)
             if f.endswith('.py') and (tree / f).exists()]
    tools = dict.fromkeys(['flake8'] + [command[0] for command
                                        in project.lint_commands])
    result = suites.SuiteResult(name=f'{project.name} {", ".join(tools)}')
    if not files:
        process.say(f'{project.name}: flake8: the series changes no Python '
                    'file')
        result.passed = 1
        return result
    problems = []
    commands = [['flake8', '{files}'], *project.lint_commands]
    for command in commands:
        argv = [str(python.parent / command[0]), *command[1:]]
        argv = [part for arg in argv
                for part in (files if arg == '{files}' else [arg])]
        shown = ' '.join(command).replace(' {files}', '')
        on = f' on {len(files)} files' if '{files}' in command else ''
        proc = process.run(argv, cwd=tree, check=False)
        if proc.returncode == 0:
            process.say(f'{project.name}: {shown}: clean{on}')
        else:
            problems.append(f'{shown}:\n{proc.stdout.strip()}')
            process.say(f'{project.name}: {shown} found problems:\n'
                        f'{proc.stdout}')
    result.passed = int(not problems)
    result.failed = int(bool(problems))
    result.error = '\n'.join(problems)
    return result


def typecheck(project):
    """mypy on the files the project's own configuration lists.

    It runs in a small venv of its own, as the project's tox mypy env does.
    """
    result = suites.SuiteResult(name=f'{project.name} mypy')
    if not project.type_check_packages:
        return result
    venv = project.venv.with_name(f'{project.name}-mypy')
    python = venv / 'bin' / 'python'
    if not python.exists():
        process.run([sys.executable, '-m', 'venv', venv])
        constraints_file = venv / 'upper-constraints.txt'
        constraints_file.write_text(virtualenvs.constraints_for(project))
        process.run([*virtualenvs.installer(python, constraints_file),
                     '--quiet', *project.type_check_packages])
    proc = process.run([python, '-m', 'mypy', '--cache-dir',
                        config.ROOT / '.work' / 'mypy-cache' / project.name],
                       cwd=queue.require_tree(project), check=False)
    result.passed = int(proc.returncode == 0)
    result.failed = int(proc.returncode != 0)
    result.error = proc.stdout.strip()
    process.say(f'{project.name}: mypy: '
                f'{proc.stdout.strip().splitlines()[-1]}')
    return result


def lint_tools(project):
    """flake8 on this repository's own Python, with the project's venv."""
    python = virtualenvs.ensure_venv(project)
    paths = ['tools/series', 'series', 'benchmarks', 'contract',
             'demo', 'devstack/tests', 'specs', 'doc']
    proc = process.run([python, '-m', 'flake8', *paths], cwd=config.ROOT,
                       check=False)
    result = suites.SuiteResult(name='tools flake8',
                                passed=int(proc.returncode == 0),
                                failed=int(proc.returncode != 0),
                                error=proc.stdout.strip())
    process.say('tools flake8: ' +
                ('clean' if not result.failed else proc.stdout))
    return result
