"""sphinx-build -W of the patched documentation and release notes."""

import shutil
import time

from series import config
from series import pristine
from series import process
from series import queue
from series import selection
from series import suites
from series import virtualenvs


DOC_BUILDS = (('doc', 'doc/source', 'doc/build/html'),
              ('api-ref', 'api-ref/source', 'api-ref/build/html'),
              ('api-guide', 'api-guide/source', 'api-guide/build/html'),
              ('releasenotes', 'releasenotes/source',
               'releasenotes/build/html'))


def release_notes_repo(project, source):
    """A git repository holding only the series' release notes.

    reno reads notes from git history. The release's own pages cannot be
    built from a tree made from the tarball: they name stable branches
    (``stable/2025.1`` and so on) that it does not have, and Nova 34.0.0
    holds two notes with the same UID, which reno refuses when they arrive
    in one commit. So the notes the series adds are committed to a
    repository of their own and rendered by the "current series" page,
    with the project's own Sphinx configuration.
    """
    repo = config.ROOT / '.work' / 'docs' / f'{project.name}-releasenotes'
    shutil.rmtree(repo, ignore_errors=True)
    (repo / source).mkdir(parents=True)
    for name in ('conf.py', '_static', '_templates'):
        path = project.tree / source / name
        if path.is_dir():
            shutil.copytree(path, repo / source / name)
        elif path.exists():
            shutil.copy(path, repo / source / name)
    shutil.copy(project.tree / source / 'unreleased.rst',
                repo / source / 'index.rst')
    notes = [path for path in selection.changed_files(project.tree)
             if path.startswith('releasenotes/notes/')
             and (project.tree / path).exists()]
    (repo / 'releasenotes' / 'notes').mkdir()
    for path in notes:
        shutil.copy(project.tree / path, repo / path)
    process.git('init', '-q', '-b', 'main', cwd=repo)
    process.git('add', '-A', cwd=repo)
    process.git('commit', '-q', '--no-verify', '-m',
                'release notes of the series', cwd=repo,
                env=pristine.TOOL_IDENT)
    return repo


def docs(project, only=()):
    """sphinx-build -W each documentation tree of the patched project."""
    queue.ensure_tree(project)
    if not shutil.which('dot'):
        message = ('the docs need Graphviz (dot): run tools/setup-test-host '
                   'or install graphviz')
        process.say(f'{project.name}: {message}')
        return [suites.SuiteResult(name=f'{project.name} docs', failed=1,
                                   error=message)]
    python = virtualenvs.ensure_venv(project)
    tree = project.tree
    results = []
    for name, source, build in DOC_BUILDS:
        if (only and name not in only) or not (tree / source).is_dir():
            continue
        cwd = tree
        if name == 'releasenotes':
            cwd = release_notes_repo(project, source)
        shutil.rmtree(tree / build, ignore_errors=True)
        started = time.monotonic()
        proc = process.run([python, '-m', 'sphinx', '-W', '--keep-going', '-q',
                            '-b', 'html', '-j', 'auto', source, tree / build],
                           cwd=cwd, env=project.test_env, check=False)
        redirects = tree / 'doc' / 'test' / 'redirect-tests.txt'
        if proc.returncode == 0 and name == 'doc' and redirects.exists():
            proc = process.run([python.parent / 'whereto',
                                f'{build}/.htaccess', redirects],
                               cwd=tree, check=False)
        result = suites.SuiteResult(name=f'{project.name} {name} (sphinx -W)')
        if proc.returncode == 0:
            result.passed = 1
        else:
            result.failed = 1
            result.error = proc.stdout.strip()
            process.say(proc.stdout)
        process.say(f'{project.name}: {name} docs '
                    f'{"built" if proc.returncode == 0 else "FAILED"} in '
                    f'{time.monotonic() - started:.0f}s')
        results.append(result)
    return results
