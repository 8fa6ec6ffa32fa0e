"""Where the repository is and what projects.toml says.

ROOT is the repository (or $SERIES_ROOT); every path the tool uses is
derived from it, so tests patch config.ROOT alone.
"""

import dataclasses
import os
from pathlib import Path
import re
import tomllib


ROOT = Path(os.environ.get('SERIES_ROOT', Path(__file__).resolve().parents[1]))


class SeriesError(Exception):
    """A problem the user must fix; printed without a traceback."""


# Each kind of project (projects.toml `kind`) and the field that pins its
# release: a Python sdist's sha256, a Go module zip's h1 (series.pristine).
PINS = {'python': 'sha256', 'go': 'h1'}


@dataclasses.dataclass
class Project:
    name: str
    version: str
    # The pin of a Python sdist; a Go module's is h1.
    sha256: str = ''
    # 'python' (an sdist from the package index) or 'go' (a module from the
    # Go module proxy, `module` its path).
    kind: str = 'python'
    module: str = ''
    # The Go checksum database's hash of the module zip (go.sum's line).
    h1: str = ''
    # Where the project reviews changes: 'gerrit' (OpenDev's, with its
    # trailers) or 'github' (pull requests).
    review: str = 'gerrit'
    # A Go module's build tags that `go vet` also builds with (files only
    # a tag builds, such as acceptance tests, vetted too).
    build_tags: tuple = ()
    # {a Go package: the Ginkgo specs its tests run in process that must
    # run and pass}: each spec is reported (series.go_tests.ginkgo_specs).
    ginkgo_suites: dict = dataclasses.field(default_factory=dict)
    constraints: str = ''
    unit_tests: str = ''
    functional_tests: str = ''
    install_extras: tuple = ()
    test_packages: tuple = ()
    test_env: dict = dataclasses.field(default_factory=dict)
    always: tuple = ()
    expensive: tuple = ()
    database_tests: str = ''
    type_check_packages: tuple = ()
    # The importable top-level package, where it is not the project's name.
    package: str = ''
    # Projects of this repository whose patched work trees replace their
    # constrained releases in this project's virtualenv.
    series_requirements: tuple = ()
    # Style checks besides flake8, each a command of the test virtualenv.
    lint_commands: tuple = ()
    # Whether the project's Launchpad resolves a blueprint trailer; if not,
    # the commit messages name the Nova blueprint in their text.
    blueprint_trailer: bool = True
    # The version the patched tree installs as, where another project's
    # series requires it: one no package index publishes.
    installs_as: str = ''
    # {requirement name: the line the series adds to requirements.txt, as
    # proposed upstream}; the patches here require the patched tree's
    # installs_as exactly.
    upstream_requirements: dict = dataclasses.field(default_factory=dict)
    # {requirement name: the project's tests that must pass with the
    # requirement's release in place of its patched tree}: the client's
    # refusals of what a library without its series would drop.
    released_requirement_tests: dict = dataclasses.field(
        default_factory=dict)

    def __post_init__(self):
        self.package = self.package or self.name
        if self.kind not in PINS:
            raise SeriesError(f'projects.toml: [{self.name}] kind '
                              f'{self.kind!r} is not one of '
                              f'{", ".join(PINS)}')

    @property
    def installed_version(self):
        return self.installs_as or self.version

    @property
    def constraints_file(self):
        return ROOT / self.constraints

    @property
    def downloads(self):
        """Where the project's releases are downloaded to."""
        return ROOT / '.work' / 'downloads'

    @property
    def pin(self):
        """The field of projects.toml that pins the release."""
        return PINS[self.kind]

    @property
    def digest(self):
        """The pin of the release: its sha256, or its h1 hash."""
        return getattr(self, self.pin)

    @property
    def pristine(self):
        return ROOT / '.work' / 'pristine' / f'{self.name}-{self.version}'

    @property
    def tree(self):
        return ROOT / '.work' / 'trees' / self.name

    @property
    def venv(self):
        return ROOT / '.work' / 'venvs' / self.name

    @property
    def patches(self):
        return ROOT / 'patches' / self.name

    @property
    def known_failures(self):
        return ROOT / 'known-failures' / f'{self.name}.txt'


def load_projects():
    with open(ROOT / 'projects.toml', 'rb') as f:
        data = tomllib.load(f)
    projects = {}
    for name, conf in data.items():
        fields = {k.replace('-', '_'): v for k, v in conf.items()}
        for key in ('install_extras', 'test_packages', 'always', 'expensive',
                    'type_check_packages', 'series_requirements',
                    'lint_commands', 'build_tags'):
            fields[key] = tuple(fields.get(key, ()))
        project = projects[name] = Project(name=name, **fields)
        if not project.digest:
            raise SeriesError(f'projects.toml: [{name}] pins no '
                              f'{project.pin}')
    return projects


def get_project(name):
    projects = load_projects()
    if name not in projects:
        raise SeriesError(f'unknown project {name!r} (known: '
                          f'{", ".join(projects)})')
    return projects[name]


def pin_base(project, version, digest):
    """Rewrite the version and the pin of [project] in projects.toml."""
    name = project.name
    path = ROOT / 'projects.toml'
    text = path.read_text()
    section = re.search(rf'^\[{re.escape(name)}\]\n(?:(?!^\[).*\n?)*', text,
                        re.M)
    if not section:
        raise SeriesError(f'projects.toml has no [{name}] section')
    body = section.group(0)
    for key, value in (('version', version), (project.pin, digest)):
        body, count = re.subn(rf'^{key} = ".*"$', f'{key} = "{value}"', body,
                              count=1, flags=re.M)
        if not count:
            raise SeriesError(f'projects.toml [{name}] has no {key} line')
    path.write_text(text[:section.start()] + body + text[section.end():])
