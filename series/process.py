"""Running commands: output, subprocesses and git."""

import os
import subprocess
import sys

from series import config


def say(*args):
    # One write per line: CI prints from two threads at once.
    sys.stdout.write(' '.join(map(str, args)) + '\n')
    sys.stdout.flush()


def run(cmd, cwd=None, env=None, check=True, capture=True, input=None):
    """Run a command; return its CompletedProcess (text output)."""
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=full_env, input=input, text=True,
        stdout=subprocess.PIPE if capture else None,
        stderr=subprocess.STDOUT if capture else None)
    if check and proc.returncode != 0:
        output = (proc.stdout or '').strip()
        raise config.SeriesError(f'{" ".join(map(str, cmd))} failed '
                                 f'(exit {proc.returncode})'
                                 + (f':\n{output}' if output else ''))
    return proc


def git(*args, cwd, env=None, check=True):
    """Run git with no user or system configuration, so output is stable."""
    git_env = {'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1',
               'LC_ALL': 'C', 'GIT_TERMINAL_PROMPT': '0'}
    git_env.update(env or {})
    return run(['git', *args], cwd=cwd, env=git_env, check=check)


def git_user(*args, cwd, check=True):
    """Run git as the user configured it (for commits made for them)."""
    return run(['git', *args], cwd=cwd, check=check)
