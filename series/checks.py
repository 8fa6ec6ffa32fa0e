"""`tools/series check`: the commit-message rules, the series file against
the patch files, and clean application to the pristine tarball.
"""

from pathlib import Path
import re
import shutil
import tempfile

from series import config
from series import identity
from series import pristine
from series import process
from series import queue
from series import requirement_forms


REFERENCE_TRAILER = re.compile(
    r'^((Partially-)?Implements: blueprint \S+|Related to blueprint \S+|'
    r'Blueprint: \S+|(Closes|Partial|Related)-Bug: #?\d+)$', re.M)
CHANGE_ID = re.compile(r'^Change-Id: (I[0-9a-f]{40})$', re.M)
TRAILER = re.compile(r'^(Change-Id|Signed-off-by|Generated-By|Assisted-By|'
                     r'(Partially-)?Implements|Blueprint|Depends-On|'
                     r'(Closes|Partial|Related)-Bug): ')
BLUEPRINT_TRAILER = re.compile(r'^((Partially-)?Implements|Blueprint): ',
                               re.M)
# Where the blueprint is another project's (the clients, tempest), their
# Launchpad hooks cannot resolve a trailer: the text names it instead.
BLUEPRINT_IN_TEXT = re.compile(r'\bNova blueprint [\w-]+')
DEPENDS_ON = re.compile(r'^Depends-On: (.*)$', re.M)
# Zuul reads a review URL. Until the change depended on is on Gerrit, the
# trailer names its Change-Id in a Gerrit query URL, which Zuul ignores:
# `check --upstream` refuses it.
DEPENDS_ON_REVIEW = re.compile(
    r'^https://review\.opendev\.org/c/openstack/[\w.-]+/\+/\d+$')
DEPENDS_ON_PLACEHOLDER = re.compile(
    r'^https://review\.opendev\.org/q/(I[0-9a-f]{40})$')
# A fix of a bug not yet filed: `check --upstream` refuses it until the
# Launchpad bug's number replaces it (doc/source/upstream.rst).
BUG_PLACEHOLDER = re.compile(r'^(Closes|Partial)-Bug: #NEW$', re.M)
# Upstream reviewers ask for subjects of at most 60 characters.
MAX_SUBJECT = 60


def lint_message(name, message, blueprint_trailer=True, upstream=False):
    """Return the ways a patch's commit message breaks Nova's rules.

    blueprint_trailer: the project's Launchpad resolves the blueprint
    (Nova); otherwise the text names the Nova blueprint and no trailer
    does. upstream: about to be pushed, so every Depends-On must be a
    review URL.
    """
    problems = []
    lines = message.splitlines()
    subject = lines[0] if lines else ''
    if not subject:
        problems.append('empty subject')
    elif len(subject) > MAX_SUBJECT:
        problems.append(f'subject is {len(subject)} characters (about 50, '
                        f'never over {MAX_SUBJECT})')
    if subject.startswith(('fixup!', 'squash!', 'amend!')):
        problems.append('a fixup commit: squash it (git rebase -i '
                        '--autosquash base)')
    if len(lines) > 1 and lines[1]:
        problems.append('no blank line after the subject')
    trailers = message.rstrip().rsplit('\n\n', 1)[-1].splitlines()
    for number, line in enumerate(lines[2:], 3):
        long_word = re.search(r'\S{40,}', line)  # a URL or a path
        is_trailer = line in trailers and re.match(r'[\w-]+: ', line)
        if len(line) > 72 and not long_word and not is_trailer:
            problems.append(f'line {number} is over 72 columns')
    if not message.isascii():
        problems.append('message is not ASCII')
    ids = CHANGE_ID.findall(message)
    if len(ids) != 1:
        problems.append(f'needs exactly one Change-Id: I<40 hex> trailer, '
                        f'has {len(ids)}')
    if not blueprint_trailer:
        if BLUEPRINT_TRAILER.search(message):
            problems.append('a blueprint trailer this project cannot '
                            'resolve: name the Nova blueprint in the text')
        if not BLUEPRINT_IN_TEXT.search(message):
            problems.append('the text does not name the Nova blueprint '
                            '("Nova blueprint <name>")')
    elif not REFERENCE_TRAILER.search(message):
        problems.append('no blueprint or bug trailer (Implements:, '
                        'Partially-Implements:, Closes-Bug:, ...)')
    for target in DEPENDS_ON.findall(message):
        placeholder = DEPENDS_ON_PLACEHOLDER.match(target)
        if placeholder and upstream:
            problems.append(f'Depends-On names {placeholder.group(1)}: '
                            'replace it by the review URL of that change '
                            '(https://review.opendev.org/c/openstack/'
                            '<project>/+/<number>)')
        elif not placeholder and not DEPENDS_ON_REVIEW.match(target):
            problems.append(f'Depends-On {target!r} is neither a review URL '
                            'nor https://review.opendev.org/q/<Change-Id>')
    if upstream:
        for placeholder in BUG_PLACEHOLDER.finditer(message):
            problems.append(f'{placeholder.group(0)}: file the bug '
                            '(doc/source/upstream.rst) and give its number')
    if not re.search(r'^Signed-off-by: .+ <.+>$', message, re.M):
        problems.append('no Signed-off-by: trailer (DCO)')
    stray = [line for paragraph in message.rstrip().split('\n\n')[1:-1]
             for line in paragraph.splitlines() if TRAILER.match(line)]
    if stray:
        problems.append(f'trailers not in the last paragraph: {stray[0]!r}')
    return [f'{name}: {p}' for p in problems]


# The trailers of OpenDev's Gerrit, which a project reviewed on GitHub
# does not read.
GERRIT_TRAILER = re.compile(
    r'^(Change-Id|Depends-On|(Partially-)?Implements|Blueprint|'
    r'(Closes|Partial|Related)-Bug): ', re.M)


# A project reviewed on GitHub: the issue a fix closes, `#NEW` until it is
# filed (`check --upstream` refuses that).
GITHUB_ISSUE = re.compile(r'^(Fixes|For) #(\d+|NEW)$', re.M)


def lint_github_message(name, message, upstream=False):
    """Return the ways a patch's commit message breaks the rules of a
    project reviewed on GitHub: a subject, a blank line, lines of at most
    72 columns, ASCII, the Nova blueprint named in the text or the issue
    it fixes given (`Fixes #N`), no Gerrit trailer.
    """
    problems = []
    lines = message.splitlines()
    subject = lines[0] if lines else ''
    if not subject:
        problems.append('empty subject')
    elif len(subject) > MAX_SUBJECT:
        problems.append(f'subject is {len(subject)} characters (never over '
                        f'{MAX_SUBJECT})')
    if len(lines) > 1 and lines[1]:
        problems.append('no blank line after the subject')
    for number, line in enumerate(lines[2:], 3):
        if len(line) > 72 and not re.search(r'\S{40,}', line):
            problems.append(f'line {number} is over 72 columns')
    if not message.isascii():
        problems.append('message is not ASCII')
    issues = GITHUB_ISSUE.findall(message)
    if not BLUEPRINT_IN_TEXT.search(message) and not issues:
        problems.append('neither names the Nova blueprint ("Nova blueprint '
                        '<name>") nor the issue it fixes ("Fixes #N")')
    if upstream and any(number == 'NEW' for _, number in issues):
        problems.append('Fixes #NEW: file the issue and give its number')
    for trailer in GERRIT_TRAILER.findall(message):
        problems.append(f'a Gerrit trailer ({trailer[0]}:) in a project '
                        'reviewed on GitHub')
    return [f'{name}: {p}' for p in problems]


def commit_message_of_patch(data):
    """Return the commit message held in a format-patch file."""
    head, _, rest = data.partition('\n\n')
    subject = re.search(r'^Subject: (.*(?:\n[ \t].*)*)', head, re.M)
    subject = re.sub(r'\n[ \t]', ' ', subject.group(1)) if subject else ''
    subject = re.sub(r'^\[PATCH[^\]]*\] ?', '', subject)
    body = rest.split('\n---\n', 1)[0]
    return subject + ('\n\n' + body.rstrip('\n') if body.strip() else '')


def check_series_files(project, upstream=False):
    problems = []
    names = queue.read_series(project)
    seen = set()
    for name in names:
        if name in seen:
            problems.append(f'series lists {name} twice')
        seen.add(name)
        if not (project.patches / name).exists():
            problems.append(f'series lists {name}, which does not exist')
    for path in sorted(project.patches.glob('*.patch')):
        if path.name not in seen:
            problems.append(f'{path.name} is not listed in series')
    ids = {}
    for name in names:
        path = project.patches / name
        if not path.exists():
            continue
        text = path.read_text(errors='replace')
        message = commit_message_of_patch(text)
        if project.review == 'github':
            problems.extend(lint_github_message(name, message, upstream))
        else:
            problems.extend(lint_message(
                name, message, blueprint_trailer=project.blueprint_trailer,
                upstream=upstream))
        if upstream:
            problems.extend(identity.upstream_problems(name, text))
        for change_id in CHANGE_ID.findall(message):
            if change_id in ids:
                problems.append(f'{name}: Change-Id {change_id} is also in '
                                f'{ids[change_id]}')
            ids[change_id] = name
    return problems


PATCH_WARNING = re.compile(r'offset|fuzz|FAILED|Reversed|malformed|'
                           r'Only garbage|can\'t find file', re.I)


def check_applies(project, quilt=False):
    """Apply the series to the pristine tarball, twice or three times.

    With plain `patch -p1` (the packager path: any fuzz or offset is a
    problem), with `git am`, and, if asked, with `quilt push -a` as
    Debian's quilt source format does; all must give the same tree.
    """
    names = [n for n in queue.read_series(project)
             if (project.patches / n).exists()]
    problems = []
    if quilt and not shutil.which('quilt'):
        return ['quilt is not installed (tools/setup-test-host installs it)']
    with tempfile.TemporaryDirectory() as tmp:
        am_tree, patch_tree = Path(tmp) / 'am', Path(tmp) / 'patch'
        pristine.init_base_repo(project, am_tree)
        process.git('worktree', 'add', '-q', '--detach', patch_tree, 'base',
                    cwd=am_tree)
        am_ok = patch_ok = True
        for name in names:
            path = project.patches / name
            if am_ok:
                result = process.git('am', *queue.AM_OPTIONS, path,
                                     cwd=am_tree,
                                     env=pristine.TOOL_IDENT, check=False)
                if result.returncode != 0:
                    am_ok = False
                    process.git('am', '--abort', cwd=am_tree, check=False)
                    problems.append(f'{name} does not apply with git am: '
                                    f'{result.stdout.strip()}')
            if patch_ok:
                result = process.run(['patch', '-p1', '--batch',
                                      '--no-backup-if-mismatch', '-i', path],
                                     cwd=patch_tree, check=False)
                warnings = [line for line in result.stdout.splitlines()
                            if PATCH_WARNING.search(line)]
                if result.returncode != 0 or warnings:
                    patch_ok = False
                    problems.append(
                        f'{name} does not apply cleanly with patch -p1: '
                        + '; '.join(warnings or [result.stdout.strip()]))
        trees = {'patch -p1': patch_tree}
        if quilt and names:
            quilt_tree = Path(tmp) / 'quilt'
            process.git('worktree', 'add', '-q', '--detach', quilt_tree,
                        'base', cwd=am_tree)
            result = process.run(['quilt', '--quiltrc=-', 'push', '-a',
                                  '--fuzz=0'],
                                 cwd=quilt_tree, check=False,
                                 env={'QUILT_PATCHES': str(project.patches),
                                      'QUILT_PC': '.pc'})
            warnings = [line for line in result.stdout.splitlines()
                        if PATCH_WARNING.search(line)]
            if result.returncode != 0 or warnings:
                problems.append('quilt push -a does not apply the series '
                                'cleanly: ' + '; '.join(
                                    warnings or [result.stdout.strip()]))
            else:
                shutil.rmtree(quilt_tree / '.pc')
                trees['quilt push -a'] = quilt_tree
        if am_ok and patch_ok and names:
            am_head = process.git('rev-parse', 'HEAD^{tree}',
                                  cwd=am_tree).stdout.strip()
            for tool, tree in trees.items():
                process.git('add', '-A', '-f', cwd=tree)
                patched = process.git('write-tree', cwd=tree).stdout.strip()
                if patched != am_head:
                    diff = process.git('diff', '--stat', am_head, patched,
                                       cwd=am_tree).stdout
                    problems.append(f'{tool} and git am give different '
                                    f'trees:\n{diff}')
    return problems


def check(project, quilt=False, upstream=False):
    problems = check_series_files(project, upstream)
    if project.upstream_requirements:
        problems.extend(requirement_forms.problems(
            project, config.load_projects()))
    if (project.tree / '.git').exists():
        problems.extend(queue.unexported(project))
    problems.extend(check_applies(project, quilt))
    return problems
