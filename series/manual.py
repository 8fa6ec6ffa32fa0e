"""This repository's own documentation, doc/source: its Sphinx build
(with -W), every page reachable from the index, every `tools/series`
verb it names existing, its one module map (design.rst) naming every
module of series/ and series/cloud/, and the list of the series'
patches, read from patches/*/series by the `series-patches` directive
at build time.
"""

import email
import email.policy
from pathlib import Path
import re
import shutil
import subprocess
import sys
import time

from series import config
from series import process
from series import queue
from series import suites
from series import virtualenvs

SOURCE = Path('doc') / 'source'
# The pages that tell a newcomer where to read on, besides the manual.
ALSO_CHECKED = ('README.rst', 'CONTRIBUTING.rst', 'HACKING.rst',
                'devstack/README.rst')
# The manual's one module map, and the packages whose modules it names.
MODULE_MAP = SOURCE / 'design.rst'
MAPPED_PACKAGES = ('series', 'series/cloud')


def patch(path):
    """(subject, first paragraph of the body) of a `git format-patch`
    file.
    """
    header, _, _ = path.read_text().partition('\n---\n')
    message = email.message_from_string(header, policy=email.policy.default)
    subject = re.sub(r'^\[PATCH[^\]]*\]\s*', '', str(message['Subject']))
    body = message.get_payload().strip()
    return subject, ' '.join(body.split('\n\n')[0].split())


def patches(project):
    """[(file name, subject, first paragraph)] of patches/<project>/, in
    series order.
    """
    project = config.load_projects()[project]
    return [(name, *patch(project.patches / name))
            for name in queue.read_series(project)]


def patch_list_rst(project):
    """The series of `project` as an enumerated reStructuredText list."""
    lines = []
    for number, (name, subject, first) in enumerate(patches(project), 1):
        lines += [f'{number}. **{subject}** (``{name}``)', '',
                  f'   {first}', '']
    return lines


def toctree_entries(page):
    """The documents a page's toctrees name, relative to the source."""
    entries, in_toctree = [], False
    for line in page.read_text().splitlines():
        if line.startswith('.. toctree::'):
            in_toctree = True
        elif in_toctree and line and not line.startswith((' ', '\t')):
            in_toctree = False
        elif in_toctree and line.strip() and not line.strip().startswith(':'):
            entries.append(line.strip())
    return entries


def unreachable_pages(source):
    """The pages under `source` that no toctree reaches from index."""
    seen, todo = set(), ['index']
    while todo:
        name = todo.pop()
        if name in seen or not (source / f'{name}.rst').exists():
            continue
        seen.add(name)
        todo += toctree_entries(source / f'{name}.rst')
    pages = {str(path.relative_to(source).with_suffix(''))
             for path in source.rglob('*.rst')
             if not any(part.startswith('_')
                        for part in path.relative_to(source).parts)}
    return sorted(pages - seen)


def module_map(page):
    """The modules the module map of `page` names, in its order: its list
    entries that begin with a module's dotted name (``* ``series.cloud.
    guest``: ...``).
    """
    return re.findall(r'^\* ``(series(?:\.\w+)+)``', page.read_text(),
                      re.M)


def mapped_modules(page):
    return set(module_map(page))


def package_modules(root):
    """The dotted names of the modules of MAPPED_PACKAGES under `root`
    (their __init__ aside).
    """
    return {'.'.join(path.relative_to(root).with_suffix('').parts)
            for package in MAPPED_PACKAGES
            for path in (root / package).glob('*.py')
            if path.name != '__init__.py'}


def module_map_problems(root, page):
    """The modules under `root` that the module map of `page` misses, and
    the entries of the map that name no module.
    """
    mapped, modules = mapped_modules(page), package_modules(root)
    return ([f'{name}: not in the module map of {page.name}'
             for name in sorted(modules - mapped)] +
            [f'{name}: in the module map of {page.name}, no such module'
             for name in sorted(mapped - modules)])


def named_verbs(text):
    """The verbs `tools/series VERB` in a text names."""
    return set(re.findall(r'tools/series\s+([a-z][a-z0-9-]*)', text))


def known_verbs():
    """The verbs of `tools/series --help`."""
    usage = subprocess.run(
        [sys.executable, str(config.ROOT / 'tools' / 'series'), '--help'],
        check=True, text=True, stdout=subprocess.PIPE).stdout
    return set(re.search(r'\{([a-z0-9,-]+)\}', usage).group(1).split(','))


def unknown_verbs(paths, verbs):
    """{verb: [files naming it]} for the verbs in `paths` not in `verbs`."""
    unknown = {}
    for path in paths:
        for verb in named_verbs(path.read_text()) - verbs:
            unknown.setdefault(verb, []).append(
                str(path.relative_to(config.ROOT)))
    return unknown


def doc_files():
    source = config.ROOT / SOURCE
    return sorted(source.rglob('*.rst')) + [
        config.ROOT / name for name in ALSO_CHECKED
        if (config.ROOT / name).exists()]


def check(project):
    """sphinx-build -W of doc/source with the Python of `project`'s
    virtualenv (Nova's, which has Sphinx), then the reachability and
    verb checks; their SuiteResults.
    """
    source = config.ROOT / SOURCE
    unreachable = unreachable_pages(source)
    unknown = unknown_verbs(doc_files(), known_verbs())
    results = [
        suites.SuiteResult(
            name='manual: pages reachable from the index',
            passed=int(not unreachable), failed=int(bool(unreachable)),
            error=f'not in any toctree: {", ".join(unreachable)}'
            if unreachable else ''),
        suites.SuiteResult(
            name='manual: tools/series verbs exist',
            passed=int(not unknown), failed=int(bool(unknown)),
            error='; '.join(f'{verb} in {", ".join(files)}'
                            for verb, files in sorted(unknown.items())))]
    python = virtualenvs.ensure_venv(project)
    build = config.ROOT / '.work' / 'docs' / 'manual'
    shutil.rmtree(build, ignore_errors=True)
    started = time.monotonic()
    proc = process.run([python, '-m', 'sphinx', '-W', '--keep-going', '-q',
                        '-b', 'html', source, build], cwd=config.ROOT,
                       check=False)
    results.append(suites.SuiteResult(
        name='manual (sphinx -W)', passed=int(proc.returncode == 0),
        failed=int(proc.returncode != 0), error=proc.stdout.strip()))
    for result in results:
        if result.failed:
            process.say(f'{result.name}: FAILED: {result.error}')
    process.say(f'manual: built in {time.monotonic() - started:.0f}s into '
                f'{build.relative_to(config.ROOT)}; '
                f'{len(doc_files())} files checked for verbs')
    return results
