"""The patch queue of each upstream project this repository patches.

A series is patches/<project>/series (quilt format) plus `git
format-patch` files beside it, applied to the release sdist pinned in
projects.toml. Everything this tool materialises lives under .work/.

  apply   fetch and verify the base, build the git work tree
          .work/trees/<project>: pristine base (tag `base`) + one commit
          per patch (git am)
  export  write the work tree's commits since `base` to patches/<project>/
  check   fail, naming what differs, if the work tree is not exported, if
          series and patch files disagree, if a patch does not apply to
          the pristine tarball with plain `patch -p1` (no fuzz, no offset)
          and with `git am`, or if a commit message breaks the rules
  status  one-line summary of each project (or of the one named)
  rebase  replay the series onto another release of the project (git am
          -3); pin that release only when the result checks clean
  test    run the project's own tests (stestr) on the work tree in a
          virtualenv pinned by constraints/upper-constraints.txt
  lint    flake8 with the project's hacking checks on the changed files
  each    every commit with only the commits before it: the test
          modules it adds or changes and flake8 on its Python files, in
          a worktree of the commit (--from N --to N: those patches)
  manual  build this repository's manual (doc/source) with sphinx -W
          and check that every page is reachable and every verb named
          exists
  ci      everything CI runs; the last line is "N passed, N failed"
  demo    the main job: apply the series, install it and run the
          feature's scenario end to end on an in-process deployment
  cloud   up|scenario|upgrade|down|status: the patched releases as a
          real cloud on this machine (separate services, libvirt with
          QEMU, Ceph), and the feature checked there down to the guest;
          upgrade: from the pristine releases to the series with a
          compute host left behind, and back

Every verb takes the project name (default: nova; for status: all).
"""

import argparse
import sys
import time

from series import checks
from series import ci
from series.cloud import cli as cloud
from series import config
from series import contract
from series import demo
from series import docs
from series import each
from series import manual
from series import process
from series import queue
from series import rebase
from series import suites


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='tools/series', description=__doc__.split('\n\n')[0],
        epilog='See doc/source/contributors.rst for the workflow.')
    verbs = parser.add_subparsers(dest='verb', required=True)

    def verb(name, help, default='nova'):
        sub = verbs.add_parser(name, help=help)
        sub.add_argument('project', nargs='?', default=default)
        return sub

    sub = verb('apply', 'build the work tree: base + one commit per patch')
    sub.add_argument('--force', action='store_true',
                     help='discard un-exported work in the work tree')
    verb('export', 'write the work tree commits back to patches/')
    sub = verb('check', 'fail if anything is not exported or does not '
               'apply')
    sub.add_argument('--quilt', action='store_true',
                     help='also apply the series with quilt push -a')
    sub.add_argument('--upstream', action='store_true',
                     help='about to push: every Depends-On must be a '
                     'review URL, not a Change-Id placeholder')
    sub = verb('rpm-patches', 'print the series as RPM spec Patch lines')
    sub.add_argument('--start', type=int, default=1, metavar='N',
                     help='number the first patch N, after the spec '
                     'file\'s own Patch lines (default: 1)')
    verb('status', 'one-line summary of each project', default=None)
    sub = verb('rebase', 'replay the series onto another release of the '
               'project and pin it if the result checks clean')
    sub.add_argument('version', nargs='?',
                     help='the release to move to, e.g. 34.0.1')
    sub.add_argument('--sha256',
                     help='the sdist digest to require (default: the one '
                     'the package index publishes)')
    sub.add_argument('--index', default=rebase.PACKAGE_INDEX,
                     help='the PEP 503 index that publishes the digest '
                     '(default: %(default)s)')
    sub.add_argument('--continue', dest='resume', action='store_true',
                     help='finish a rebase stopped on a conflict, once '
                     '`git am` is done in the work tree')
    sub = verb('test', 'run the tests on the work tree')
    sub.add_argument('tests', nargs='*', metavar='TEST',
                     help='test modules or stestr regexes (default: the '
                     'selection derived from the series)')
    sub.add_argument('--full', action='store_true',
                     help='the complete unit and functional suites')
    sub.add_argument('--unit', action='store_true', help='unit tests only')
    sub.add_argument('--functional', action='store_true',
                     help='functional tests only')
    sub.add_argument('--databases', action='store_true',
                     help='fail unless the MySQL and PostgreSQL tests ran')
    sub.add_argument('--concurrency', type=int)
    verb('lint', 'flake8 with hacking on the files the series changes, '
         'and mypy')
    sub = verb('each', 'the tests each commit adds or changes and flake8 '
               'on its Python files, with only the commits before it')
    sub.add_argument('--from', dest='first', type=int, metavar='N',
                     help='start at patch N (default: 1)')
    sub.add_argument('--to', dest='last', type=int, metavar='N',
                     help='stop after patch N (default: the last)')
    sub = verb('docs', 'sphinx-build -W the patched docs')
    sub.add_argument('--only', action='append', default=[],
                     choices=[name for name, _, _ in docs.DOC_BUILDS])
    verbs.add_parser('manual', help="build this repository's manual "
                     '(doc/source) with sphinx -W and check it')
    verb('contract', 'the contract suite (contract/<project>/) on the '
         'release and on the patched tree')
    sub = verbs.add_parser('bench', help='run a benchmark from benchmarks/ '
                           'on the work tree: bench PROJECT NAME [ARGS]')
    sub.add_argument('project')
    sub.add_argument('benchmark')
    sub.add_argument('arguments', nargs=argparse.REMAINDER)
    sub = verbs.add_parser('ci', help='everything CI runs')
    sub.add_argument('--no-databases', action='store_true',
                     help='do not set up MariaDB and PostgreSQL (their '
                     'tests then skip and are not required)')
    sub = verb('demo', 'the main job: the feature end to end on an '
               'in-process deployment')
    sub.add_argument('--force', action='store_true',
                     help='discard un-exported work in the work tree')
    sub.add_argument('--keep-running', action='store_true',
                     help='leave the API listening until interrupted')
    sub.add_argument('--port', type=int, default=0,
                     help='port of the API on 127.0.0.1 (default: any)')
    sub.add_argument('--work-in-progress', action='store_true',
                     help='run on the work tree as it is, edits and '
                     'commits not yet exported included')
    sub = verbs.add_parser('cloud', help='the patched releases as a real '
                           'cloud on this machine: cloud up|scenario|'
                           'upgrade|down|status')
    sub.add_argument('action', choices=('up', 'scenario', 'upgrade', 'down',
                                        'status'))
    args = parser.parse_args(argv)

    if args.verb == 'test' and args.project not in config.load_projects():
        # `tools/series test nova.tests.unit.test_x`: the project is nova.
        args.tests.insert(0, args.project)
        args.project = 'nova'
    try:
        if args.verb == 'ci':
            return ci.ci(args)
        if args.verb == 'demo':
            return demo.demo(args)
        if args.verb == 'cloud':
            return cloud.main(args.action)
        if args.verb == 'manual':
            started = time.monotonic()
            return suites.print_summary(
                manual.check(config.get_project('nova')), started)
        if args.verb == 'status' and args.project is None:
            for project in config.load_projects().values():
                process.say(queue.status(project))
            return 0
        project = config.get_project(args.project)
        if args.verb == 'apply':
            queue.apply(project, force=args.force)
        elif args.verb == 'export':
            queue.export(project)
        elif args.verb == 'rpm-patches':
            for line in queue.rpm_patch_lines(project, args.start):
                print(line)
        elif args.verb == 'check':
            problems = checks.check(project, args.quilt, args.upstream)
            for problem in problems:
                process.say(f'{project.name}: {problem}')
            if problems:
                return 1
            process.say(f'{project.name}: series check clean')
        elif args.verb == 'status':
            process.say(queue.status(project))
        elif args.verb == 'rebase':
            if args.resume:
                rebase.finish(project)
            elif not args.version:
                parser.error('rebase needs the VERSION to move to, or '
                             '--continue')
            else:
                rebase.rebase(project, args.version, args.sha256,
                              args.index)
        elif args.verb == 'test':
            started = time.monotonic()
            only_unit = args.unit and not args.functional
            only_func = args.functional and not args.unit
            results = suites.test(project, filters=args.tests,
                                  full=args.full, unit=not only_func,
                                  functional=not only_unit,
                                  databases=args.databases,
                                  concurrency=args.concurrency)
            return suites.print_summary(results, started)
        elif args.verb == 'lint':
            return 1 if (suites.lint(project).failed or
                         suites.typecheck(project).failed) else 0
        elif args.verb == 'each':
            return each.each(project, args.first, args.last)
        elif args.verb == 'bench':
            return suites.bench(project, args.benchmark, args.arguments)
        elif args.verb == 'contract':
            started = time.monotonic()
            return suites.print_summary([contract.contract(project)], started)
        elif args.verb == 'docs':
            started = time.monotonic()
            return suites.print_summary(docs.docs(project, args.only), started)
    except config.SeriesError as error:
        print(f'tools/series: {error}', file=sys.stderr)
        return 2
    return 0
