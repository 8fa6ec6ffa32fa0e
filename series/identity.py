"""Who the commits of a series are by: the identity a patch names (its
author and its Signed-off-by), whether it can go upstream, and `tools/series
sign`, which makes every commit of a work tree yours.

OpenStack takes changes under the Developer Certificate of Origin: the
Signed-off-by must be a real person's, the one of their Gerrit account.
The repository's patches are authored and signed off by a placeholder
identity at a reserved domain (RFC 2606), which `check --upstream`
refuses.
"""

import re
import shlex
import sys

from series import config
from series import process
from series import queue

IDENTITY = re.compile(r'^(?P<name>[^<>]+?) <(?P<email>[^<>@\s]+@[^<>\s]+)>$')
# RFC 2606 and RFC 6761: domains that name no one.
RESERVED = re.compile(r'(^|\.)(example|invalid|test|localhost)$|'
                      r'(^|\.)example\.(com|net|org)$', re.I)
SIGNED_OFF_BY = re.compile(r'^Signed-off-by: (.*)$', re.M)
AUTHOR = re.compile(r'^From: (.*)$', re.M)


def parse(text):
    """'Name <email>' -> (name, email); SeriesError if it is not that."""
    match = IDENTITY.match(text.strip())
    if not match:
        raise config.SeriesError(f'{text!r} is not "Name <e-mail>"')
    return match.group('name'), match.group('email')


def is_placeholder(email):
    return bool(RESERVED.search(email.rpartition('@')[2]))


def upstream_problems(name, patch_text):
    """Why the author or a Signed-off-by of a format-patch file cannot go
    upstream: an identity at a reserved domain.
    """
    head = patch_text.split('\n\n', 1)[0]
    problems = []
    for role, found in (('author', AUTHOR.findall(head)),
                        ('Signed-off-by', SIGNED_OFF_BY.findall(patch_text))):
        for identity in found:
            email = identity.rpartition('<')[2].rstrip('>')
            if is_placeholder(email):
                problems.append(
                    f'{name}: {role} {identity.strip()} is a placeholder '
                    '(a reserved domain): `tools/series sign` makes the '
                    'commits yours')
    return problems


def user_identity(tree):
    """'Name <email>' from the user's git configuration."""
    values = [process.git_user('config', key, cwd=tree,
                               check=False).stdout.strip()
              for key in ('user.name', 'user.email')]
    if not all(values):
        raise config.SeriesError('git config user.name and user.email are '
                                 'not set: set them or give --as "Name '
                                 '<e-mail>"')
    return f'{values[0]} <{values[1]}>'


# Run by `git rebase --exec` on each commit, with SERIES_SIGN_AS set to
# 'Name <email>': the commit's sign-offs at a reserved domain become that
# identity's (in place, the trailers keep their order), it is signed off
# so if it was not, and authored by it.
RESIGN = """
import os, re, subprocess
sign = 'Signed-off-by: ' + os.environ['SERIES_SIGN_AS']
placeholder = re.compile(os.environ['SERIES_PLACEHOLDER'])
message = subprocess.run(['git', 'log', '-1', '--format=%B'], check=True,
                         text=True, stdout=subprocess.PIPE).stdout
lines = []
for line in message.rstrip().splitlines():
    if line.startswith('Signed-off-by: ') and placeholder.search(line):
        line = sign
    if line != sign or sign not in lines:
        lines.append(line)
message = '\\n'.join(lines) + '\\n'
if sign not in lines:
    message = subprocess.run(
        ['git', 'interpret-trailers', '--trailer', sign], check=True,
        text=True, input=message, stdout=subprocess.PIPE).stdout
subprocess.run(['git', 'commit', '-q', '--amend', '--reset-author', '-F',
                '-'], check=True, text=True, input=message)
"""
# A sign-off line whose address is at a reserved domain (RESERVED).
PLACEHOLDER_SIGN_OFF = (r'@([^>]*\.)?(example|invalid|test|localhost|'
                        r'example\.(com|net|org))>$')


def sign(project, identity=None):
    """Author every commit of the work tree as `identity` ('Name
    <email>', default the user's git configuration) and sign it off so,
    dropping placeholder sign-offs and keeping every other trailer. Export
    afterwards.
    """
    tree = queue.require_tree(project)
    name, email = parse(identity or user_identity(tree))
    if is_placeholder(email):
        raise config.SeriesError(f'{email} is at a reserved domain')
    env = {'GIT_AUTHOR_NAME': name, 'GIT_AUTHOR_EMAIL': email,
           'GIT_COMMITTER_NAME': name, 'GIT_COMMITTER_EMAIL': email,
           'SERIES_SIGN_AS': f'{name} <{email}>',
           'SERIES_PLACEHOLDER': PLACEHOLDER_SIGN_OFF,
           'SERIES_RESIGN': RESIGN}
    # git refuses an --exec command of several lines: the script is in
    # the environment.
    resign = f'{shlex.quote(sys.executable)} -c "$SERIES_RESIGN"'
    process.run(['git', 'rebase', '-q', 'base', '--exec', resign], cwd=tree,
                env=env)
    process.say(f'{project.name}: every commit since base authored and '
                f'signed off by {name} <{email}>; `tools/series export '
                f'{project.name}` writes them to patches/')
