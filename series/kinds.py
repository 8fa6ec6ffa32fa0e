"""The kinds of project (projects.toml `kind`) and how each is tested.

A kind is a module with the same functions, called with the project
(its `tree` the work tree, or a copy of it: a commit's worktree, the
mutants'):

- environment(project): what runs its tests (a Python project's
  virtualenv), passed back to the functions below; None if nothing does;
- test(project, **options): the selection of its tests, [SuiteResult]
  (options are suites.test()'s);
- lint(project): a SuiteResult; typecheck(project): one, or None where
  the kind has no type checker apart from its build;
- test_commit(project, environment, label, files, row): a commit's own
  tests and the style of the `files` it changes, into its `row` (its
  'modules', 'passed', 'failed', 'skipped' and 'style');
- prepare_copy(project, environment, tree, label): raises if the copy's
  tests would not test the copy;
- run_ids(project, environment, tests, suite): those tests alone, one
  SuiteResult;
- UNSUPPORTED_VERBS: the verbs of tools/series it has no counterpart for.

How a kind's release is pinned and fetched is series.pristine's (its
FORMATS); a third kind is a module here, a release format there and the
field that pins it in config.PINS (test_kinds checks all three).
"""

from series import go_kind
from series import python_kind

KINDS = {'python': python_kind, 'go': go_kind}


def of(project):
    return KINDS[project.kind]
