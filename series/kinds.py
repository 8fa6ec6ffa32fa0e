"""The kinds of project (projects.toml `kind`): what tests a project and
checks its style. A Python project's tests are stestr suites
(series.suites) and its style checks flake8 (series.linters); a Go
module's are `go test`, `go vet` and gofmt (series.go_tests).
"""

from series import go_tests
from series import linters
from series import suites


def test(project, **options):
    """The selection of the project's tests; [SuiteResult]. `options`
    are suites.test()'s; of them a Go project takes `background`.
    """
    if project.kind == 'go':
        return go_tests.test(project,
                             background=options.get('background', False))
    return suites.test(project, **options)


def lint(project):
    """The style checks of what the series changes; a SuiteResult."""
    if project.kind == 'go':
        return go_tests.lint(project)
    return linters.lint(project)


def typecheck(project):
    """mypy of a Python project; a Go project's types are the compiler's
    (go vet and go test build it).
    """
    if project.kind == 'go':
        return suites.SuiteResult(name=f'{project.name} types (the '
                                  'compiler\'s)', passed=1)
    return linters.typecheck(project)
