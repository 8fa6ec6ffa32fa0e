"""Running commands: output, subprocesses and git."""

import os
import subprocess
import sys

from series import config


def say(*args):
    # One write per line: CI prints from two threads at once.
    sys.stdout.write(' '.join(map(str, args)) + '\n')
    sys.stdout.flush()


# `python -c BACKGROUND command...`, started in a session of its own:
# the command and its children take the CPU that the processes of other
# sessions leave. The kernel's autogroup scheduling shares the CPU between
# sessions first, so the session's nice value matters, not only the
# process's.
BACKGROUND = """
import os, sys
try:
    with open('/proc/self/autogroup', 'w') as autogroup:
        autogroup.write('%d')
except OSError:
    pass
os.nice(%d)
os.execvp(sys.argv[1], sys.argv[1:])
"""
BACKGROUND_NICE = 10


def background(cmd):
    """`cmd` wrapped to run at BACKGROUND_NICE: start it with
    start_new_session=True (its session is what the kernel renices).
    """
    return [sys.executable, '-c',
            BACKGROUND % (BACKGROUND_NICE, BACKGROUND_NICE),
            *map(str, cmd)]


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
