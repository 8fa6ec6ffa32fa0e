"""`tools/series`: the command line. `tools/series --help` lists the
verbs; each verb is one function here, set as its parser's `func` by the
add_<verb>() beside it, and build_parser() adds them in --help's order.

A series is patches/<project>/series (quilt format) plus `git
format-patch` files beside it, applied to the release sdist pinned in
projects.toml. Everything this tool materialises lives under .work/.
A verb about a project takes its name, most often optional with nova
as the default (status: every project).
"""

import argparse
from pathlib import Path
import sys
import time

from series import checks
from series import ci
from series.cloud import cli as cloud
from series import config
from series import contract
from series import demo
from series import each
from series import identity
from series import kinds
from series import manual
from series import mutants
from series import patched_docs
from series import process
from series import queue
from series import rebase
from series import requirement_forms
from series import sdist
from series import suites

DESCRIPTION = 'The patch queue of each upstream project this repository ' \
    'patches.'


def add_verb(verbs, name, func, help_text, default='nova'):
    """Add the parser of the verb `name`, which runs `func`, with an
    optional project argument that defaults to `default` (none at all
    when `default` is False); return the parser.
    """
    sub = verbs.add_parser(name, help=help_text)
    if default is not False:
        sub.add_argument('project', nargs='?', default=default)
    sub.set_defaults(func=func)
    return sub


def apply(args, project):
    queue.apply(project, force=args.force)


def add_apply(verbs):
    sub = add_verb(verbs, 'apply', apply,
                   'build the work tree: base + one commit per patch')
    sub.add_argument('--force', action='store_true',
                     help='discard un-exported work in the work tree')


def export(args, project):
    if args.upstream:
        names = requirement_forms.export_upstream(project, args.upstream)
        process.say(f'{project.name}: wrote {len(names)} patches and their '
                    f'series, in the upstream form, to {args.upstream}')
        return 0
    queue.export(project)


def add_export(verbs):
    sub = add_verb(verbs, 'export', export,
                   'write the work tree commits back to patches/')
    sub.add_argument('--upstream', type=Path, metavar='DIR',
                     help='instead, write patches/PROJECT to DIR as '
                     'proposed upstream (its requirement lines asking for '
                     'upstream releases)')


def check(args, project):
    problems = checks.check(project, args.quilt, args.upstream)
    for problem in problems:
        process.say(f'{project.name}: {problem}')
    if problems:
        return 1
    process.say(f'{project.name}: series check clean')


def add_check(verbs):
    sub = add_verb(verbs, 'check', check, 'fail if anything is not '
                   'exported or does not apply')
    sub.add_argument('--quilt', action='store_true',
                     help='also apply the series with quilt push -a')
    sub.add_argument('--upstream', action='store_true',
                     help='about to push: every Depends-On must be a '
                     'review URL, not a Change-Id placeholder')


def sign(args, project):
    identity.sign(project, args.identity)


def add_sign(verbs):
    sub = add_verb(verbs, 'sign', sign, 'author and sign off every commit '
                   'of the work tree as you (export afterwards)')
    sub.add_argument('--as', dest='identity', metavar='"NAME <E-MAIL>"',
                     help='default: git config user.name and user.email')


def rpm_patches(args, project):
    for line in queue.rpm_patch_lines(project, args.start):
        print(line)


def add_rpm_patches(verbs):
    sub = add_verb(verbs, 'rpm-patches', rpm_patches,
                   'print the series as RPM spec Patch lines')
    sub.add_argument('--start', type=int, default=1, metavar='N',
                     help='number the first patch N, after the spec '
                     'file\'s own Patch lines (default: 1)')


def status(args, project):
    for each_project in ([project] if project else
                         config.load_projects().values()):
        process.say(queue.status(each_project))


def add_status(verbs):
    add_verb(verbs, 'status', status, 'one-line summary of each project',
             default=None)


def rebase_series(args, project):
    if args.resume:
        rebase.finish(project)
    elif not args.version:
        raise config.SeriesError('rebase needs the VERSION to move to, or '
                                 '--continue')
    else:
        rebase.rebase(project, args.version, args.pin, args.index)


def add_rebase(verbs):
    sub = add_verb(verbs, 'rebase', rebase_series, 'replay the series onto '
                   'another release of the project and pin it if the '
                   'result checks clean')
    sub.add_argument('version', nargs='?',
                     help='the release to move to, e.g. 34.0.1')
    sub.add_argument('--pin',
                     help='the pin to require: an sdist\'s sha256, a Go '
                     'module zip\'s h1 (default: what --index publishes; '
                     'given both, they must agree)')
    sub.add_argument('--index',
                     help='the PEP 503 index that publishes an sdist\'s '
                     f'sha256 (default: {sdist.PACKAGE_INDEX}), or the Go '
                     'module proxy whose zip is hashed and unpacked '
                     '(default: the go command\'s GOPROXY)')
    sub.add_argument('--continue', dest='resume', action='store_true',
                     help='finish a rebase stopped on a conflict, once '
                     '`git am` is done in the work tree')


def test(args, project):
    started = time.monotonic()
    only_unit = args.unit and not args.functional
    only_func = args.functional and not args.unit
    results = kinds.of(project).test(
        project, filters=args.tests, full=args.full, unit=not only_func,
        functional=not only_unit, databases=args.databases,
        concurrency=args.concurrency)
    return suites.print_summary(results, started)


def add_test(verbs):
    sub = add_verb(verbs, 'test', test, 'run the tests on the work tree')
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


def lint(args, project):
    kind = kinds.of(project)
    if kind.lint(project).failed:
        return 1
    types = kind.typecheck(project)
    return 1 if types and types.failed else 0


def add_lint(verbs):
    add_verb(verbs, 'lint', lint, 'flake8 with hacking on the files the '
             'series changes, and mypy')


def each_commit(args, project):
    return each.each(project, args.first, args.last)


def add_each(verbs):
    sub = add_verb(verbs, 'each', each_commit, 'the tests each commit adds '
                   'or changes and flake8 on its Python files, with only '
                   'the commits before it')
    sub.add_argument('--from', dest='first', type=int, metavar='N',
                     help='start at patch N (default: 1)')
    sub.add_argument('--to', dest='last', type=int, metavar='N',
                     help='stop after patch N (default: the last)')


def build_docs(args, project):
    started = time.monotonic()
    return suites.print_summary(patched_docs.docs(project, args.only), started)


def add_docs(verbs):
    sub = add_verb(verbs, 'docs', build_docs,
                   'sphinx-build -W the patched docs')
    sub.add_argument('--only', action='append', default=[],
                     choices=[name for name, _, _ in patched_docs.DOC_BUILDS])


def build_manual(args, project):
    started = time.monotonic()
    return suites.print_summary(manual.check(project), started)


def add_manual(verbs):
    add_verb(verbs, 'manual', build_manual, "build this repository's "
             'manual (doc/source) with sphinx -W and check it',
             default=False)


def run_contract(args, project):
    started = time.monotonic()
    return suites.print_summary([contract.contract(project)], started)


def add_contract(verbs):
    add_verb(verbs, 'contract', run_contract, 'the contract suite '
             '(contract/<project>/) on the release and on the patched tree')


def bench(args, project):
    return suites.bench(project, args.benchmark, args.arguments)


def add_bench(verbs):
    sub = add_verb(verbs, 'bench', bench, 'run a benchmark from benchmarks/ '
                   'on the work tree: bench PROJECT NAME [ARGS]',
                   default=False)
    sub.add_argument('project')
    sub.add_argument('benchmark')
    sub.add_argument('arguments', nargs=argparse.REMAINDER)


def run_mutants(args, project):
    return mutants.mutants(args.names, args.projects or ())


def add_mutants(verbs):
    sub = add_verb(verbs, 'mutants', run_mutants, 'apply each mutant of '
                   'mutants.toml (one guard of the series or of the '
                   "tool's checks removed) and run the tests that must kill "
                   'it', default=False)
    sub.add_argument('names', nargs='*', metavar='MUTANT',
                     help='only these mutants (default: all)')
    sub.add_argument('--project', dest='projects', action='append',
                     metavar='PROJECT', help='only the mutants of PROJECT '
                     "('tools': those of this repository's own code)")


def run_ci(args, project):
    return ci.ci(args)


def add_ci(verbs):
    sub = add_verb(verbs, 'ci', run_ci, 'everything CI runs', default=False)
    sub.add_argument('--no-databases', action='store_true',
                     help='do not set up MariaDB and PostgreSQL (their '
                     'tests then skip and are not required)')


def run_demo(args, project):
    return demo.demo(args)


def add_demo(verbs):
    sub = add_verb(verbs, 'demo', run_demo, 'the main job: the feature end '
                   'to end on an in-process deployment')
    sub.add_argument('--force', action='store_true',
                     help='discard un-exported work in the work tree')
    sub.add_argument('--keep-running', action='store_true',
                     help='leave the API listening until interrupted')
    sub.add_argument('--port', type=int, default=0,
                     help='port of the API on 127.0.0.1 (default: any)')
    sub.add_argument('--work-in-progress', action='store_true',
                     help='run on the work tree as it is, edits and '
                     'commits not yet exported included')


def run_cloud(args, project):
    return cloud.main(args.action)


def add_cloud(verbs):
    sub = add_verb(verbs, 'cloud', run_cloud, 'the patched releases as a '
                   'real cloud on this machine: cloud '
                   'up|scenario|upgrade|down|status', default=False)
    sub.add_argument('action', choices=('up', 'scenario', 'upgrade', 'down',
                                        'status'))


# The verbs in the order --help lists them.
VERB_PARSERS = (add_apply, add_export, add_check, add_sign, add_rpm_patches,
                add_status, add_rebase, add_test, add_lint, add_each,
                add_docs, add_manual, add_contract, add_bench, add_mutants,
                add_ci, add_demo, add_cloud)


def build_parser():
    """The parser of tools/series: one sub-parser per verb, each made by
    its add_<verb>() of VERB_PARSERS.
    """
    parser = argparse.ArgumentParser(
        prog='tools/series', description=DESCRIPTION,
        epilog='See doc/source/contributors.rst for the workflow.')
    verbs = parser.add_subparsers(dest='verb', required=True)
    for add_parser in VERB_PARSERS:
        add_parser(verbs)
    return parser


# The verbs that take no project of their own (run_ci, run_demo and
# run_cloud read theirs from args; manual documents Nova's series).
WITHOUT_PROJECT = ('ci', 'demo', 'cloud')


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.verb == 'test' and args.project not in config.load_projects():
        # `tools/series test nova.tests.unit.test_x`: the project is nova.
        args.tests.insert(0, args.project)
        args.project = 'nova'
    try:
        if args.verb in WITHOUT_PROJECT:
            project = None
        elif args.verb == 'manual':
            project = config.get_project('nova')
        else:
            project = getattr(args, 'project', None)
            project = project and config.get_project(project)
            if (project and
                    args.verb in kinds.of(project).UNSUPPORTED_VERBS):
                raise config.SeriesError(
                    f'`{args.verb}` does not take a {project.kind} project '
                    f'({project.name})')
        return args.func(args, project) or 0
    except config.SeriesError as error:
        print(f'tools/series: {error}', file=sys.stderr)
        return 2
