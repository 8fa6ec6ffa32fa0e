"""Which tests cover what the series changes, and stestr filters for them."""

import ast
import os
from pathlib import Path
import re

from series import process


def changed_files(tree):
    """Files the work tree changes relative to base (including edits)."""
    out = process.git('diff', '--name-only', '--no-renames', 'base',
                      cwd=tree).stdout
    untracked = process.git('ls-files', '--others', '--exclude-standard',
                            cwd=tree).stdout
    return sorted(set(out.split()) | set(untracked.split()))


def module_of(path):
    """nova/tests/unit/test_x.py -> nova.tests.unit.test_x (dirs too)."""
    return path.removesuffix('.py').replace('/', '.')


def imports_module(source, dotted):
    parent, _, name = dotted.rpartition('.')
    pattern = (rf'^(from {re.escape(parent)} import {re.escape(name)}\b|'
               rf'import {re.escape(dotted)}\b|'
               rf'from {re.escape(dotted)} import )')
    return re.search(pattern, source, re.M) is not None


def test_modules(tree, directory):
    return sorted(p for p in (tree / directory).rglob('test_*.py'))


def module_in(tree, path):
    """The dotted name of `path`, a file or directory of `tree`."""
    return module_of(str(path.relative_to(tree)))


class Sources:
    """The text of the work tree's files, each read once, though the test
    modules are searched again for each changed file.
    """

    def __init__(self, tree):
        self.tree = tree
        self.texts = {}

    def text(self, path):
        if path not in self.texts:
            self.texts[path] = path.read_text(errors='replace')
        return self.texts[path]

    def mentioning(self, pattern, modules, code_only=False):
        """The names of the test modules of `modules` (paths) whose text
        matches `pattern`; with `code_only`, whose code does, comments
        left out (a comment that names a fixture is not a use of it).
        """
        def text(path):
            return (re.sub(r'#.*', '', self.text(path)) if code_only
                    else self.text(path))
        return {module_in(self.tree, path) for path in modules
                if re.search(pattern, text(path), re.M)}


def sample_users(path, func_modules, sources):
    """The functional modules of `func_modules` that use the sample
    `path`: an API sample (.../api_samples/<dir>/...) is used by those
    with `sample_dir = '<dir>'`, a notification sample
    (.../notification_samples/<name>.json) by those that name '<name>'.
    None when `path` is no sample.
    """
    samples = re.search(r'(?:^|/)api_samples/([^/]+)/', path)
    if samples:
        quoted = re.escape(samples.group(1))
        return sources.mentioning(rf'sample_dir = [\'"]{quoted}[\'"]',
                                  func_modules)
    notification = re.search(
        r'notification_samples/(?:.*/)?([^/]+)\.json$', path)
    if notification:
        quoted = re.escape(notification.group(1))
        return sources.mentioning(rf'[\'"]{quoted}[\'"]', func_modules)
    return None


def in_test_directories(project, path):
    """Whether `path` lies in the project's unit or functional tests."""
    return any(directory and path.startswith(directory + '/')
               for directory in (project.unit_tests,
                                 project.functional_tests))


def fixtures_pattern(source):
    """A regex of the names of the test fixtures (classes named *Fixture)
    that the helper module `source` defines, or None if it defines none.
    """
    fixtures = re.findall(r'^class (\w+Fixture)\b', source, re.M)
    return rf'\b({"|".join(fixtures)})\b' if fixtures else None


def directory_and_name(project, path):
    """The directory of the source module `path` in the project's package
    and the module's name: <pkg>/compute/api.py is ('compute', 'api'), a
    package's __init__.py is named after the package.
    """
    directory, mod = os.path.split(path[len(project.package) + 1:-3])
    if mod == '__init__':
        directory, mod = os.path.split(directory)
    return directory, mod


def unit_tests_of_source(project, tree, path, sources, wide):
    """The unit test modules of the source module `path`: its mirror
    <unit>/<dir>/test_<mod>.py and, with `wide`, the unit test modules of
    <unit>/<dir>/ that import it; for a top-level module, imported almost
    everywhere, the unit test modules named test_<mod>.py in any package.
    """
    if not project.unit_tests:
        return set()
    directory, mod = directory_and_name(project, path)
    dotted = module_of(path).removesuffix('.__init__')
    mirror = Path(project.unit_tests) / directory
    found = set()
    if (tree / mirror / f'test_{mod}.py').exists():
        found.add(module_of(str(mirror / f'test_{mod}.py')))
    if directory and (tree / mirror).is_dir():
        for test in sorted((tree / mirror).glob('test_*.py')
                           if wide else ()):
            if imports_module(sources.text(test), dotted):
                found.add(module_in(tree, test))
    else:
        for test in sorted((tree / mirror).rglob(f'test_{mod}.py')):
            found.add(module_in(tree, test))
    return found


def functional_tests_named_after(project, tree, path, func_modules):
    """The functional modules of `func_modules` named test_<mod>.py after
    the source module `path`.
    """
    _, mod = directory_and_name(project, path)
    return {module_in(tree, test) for test in func_modules
            if test.name == f'test_{mod}.py'}


def with_touched(project, tree, unit, functional, touched, wide):
    """The sorted unit and functional entries of the selection: `unit`
    and `functional` with the test modules the series touches
    (`touched`), less the project's `expensive` modules it does not
    touch. Without `wide`, a touched module stands for itself by the
    tests it adds or changes (changed_tests()), also where it is a
    changed source module's own test module or one of its samples'.
    """
    expensive = set(project.expensive) - touched
    func_dir = project.functional_tests
    func_package = module_of(func_dir) + '.' if func_dir else None
    if not wide:
        functional -= touched
        unit -= touched - set(project.always)
    for module in touched:
        tests = None if wide else changed_tests(
            tree, module.replace('.', '/') + '.py')
        entries = ([f'{module}.{name}' for name in tests] if tests
                   else [module])
        if func_package and module.startswith(func_package):
            functional.update(entries)
        else:
            unit.update(entries)
    return sorted(unit - expensive), sorted(functional - expensive)


def select_tests(project, tree, files, wide=True):
    """Derive the unit and functional test modules covering `files`.

    - a test module the series touches runs;
    - a source module <pkg>/<dir>/<mod>.py selects <unit>/<dir>/test_<mod>.py
      and, below the top package, the unit test modules of <unit>/<dir>/
      that import it (for a top-level module, imported almost everywhere,
      the unit test modules named test_<mod>.py in any package), plus the
      functional modules named test_<mod>.py;
    - a test fixture the series changes (a class named *Fixture in a helper
      module under <pkg>/tests/) selects the test modules that use it (a
      comment naming it is not a use);
    - an API sample (doc/api_samples/<dir>/..., .../api_samples/<dir>/...)
      selects the functional modules with `sample_dir = '<dir>'`, and a
      notification sample (.../notification_samples/<name>.json) those
      that name '<name>'.

    The project's `expensive` modules are selected only when the series
    touches them (see projects.toml). Without `wide`, the selection is
    the narrow one CI runs: no unit module for importing a changed module,
    only the functional modules the series touches and those of its
    samples, none through a source module's name or a fixture, and of a
    test module the series touches only the tests it adds or changes
    (changed_tests()).
    """
    unit, functional = set(project.always), set()
    touched = set()
    unit_dir, func_dir = project.unit_tests, project.functional_tests
    unit_modules = test_modules(tree, unit_dir) if unit_dir else []
    func_modules = test_modules(tree, func_dir) if func_dir else []
    sources = Sources(tree)
    for path in files:
        samples = sample_users(path, func_modules, sources)
        if samples is not None:
            functional |= samples
        elif not path.endswith('.py') or not (tree / path).exists():
            continue
        elif Path(path).name.startswith('test_'):
            if in_test_directories(project, path):
                touched.add(module_of(path))
        elif not path.startswith(project.package + '/'):
            continue
        elif path.startswith(f'{project.package}/tests/'):
            used = fixtures_pattern(sources.text(tree / path))
            if used:
                unit |= sources.mentioning(used, unit_modules,
                                           code_only=True)
                if wide:
                    functional |= sources.mentioning(used, func_modules,
                                                     code_only=True)
        else:
            unit |= unit_tests_of_source(project, tree, path, sources, wide)
            if wide:
                functional |= functional_tests_named_after(
                    project, tree, path, func_modules)
    return with_touched(project, tree, unit, functional, touched, wide)


def span(node):
    """The first and last line of a class or function, decorators
    included.
    """
    return (min([node.lineno] + [d.lineno for d in node.decorator_list]),
            node.end_lineno)


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Methods every test of the class runs.
FIXTURE_METHODS = ('setUp', 'tearDown', 'setUpClass', 'tearDownClass',
                   '__init__', 'run')


def names_of(nodes):
    return {getattr(node, 'id', getattr(node, 'attr', None))
            for node in nodes}


def mentions(node, name):
    return any(getattr(n, 'attr', getattr(n, 'id', None)) == name
               for n in ast.walk(node)
               if isinstance(n, (ast.Attribute, ast.Name)))


def callers(cls, name):
    """The test methods of a class that name the method `name`, directly
    or through its other methods.
    """
    helpers, tests = {name}, set()
    grown = True
    while grown:
        grown = False
        for node in cls.body:
            if (isinstance(node, FUNCTIONS) and node.name not in helpers
                    and node.name not in tests
                    and any(mentions(node, h) for h in helpers)):
                if node.name.startswith('test'):
                    tests.add(node.name)
                else:
                    helpers.add(node.name)
                    grown = True
    return tests


def methods_of(source):
    """{(class, method)} of a module's top-level classes."""
    return {(cls.name, node.name) for cls in ast.parse(source).body
            if isinstance(cls, ast.ClassDef)
            for node in cls.body if isinstance(node, FUNCTIONS)}


def changed_tests(tree, path):
    """What the series changes in the test module `path` (relative to
    base), as test ids relative to the module: a test method it adds or
    changes ('Class.test_x') or that call a helper method it changes,
    or a whole class ('Class') where it changes the class outside its
    methods (an attribute) or in setUp or tearDown; each with the classes
    that derive from its class in the module. A helper method it adds
    needs no more: only the tests it adds or changes can call it. None
    when it changes the module outside its classes (imports, helpers) or
    adds the module.
    """
    if process.git('cat-file', '-e', f'base:{path}', cwd=tree,
                   check=False).returncode != 0:
        return None
    diff = process.git('diff', '-U0', 'base', '--', path, cwd=tree).stdout
    lines = set()
    for hunk in re.finditer(r'^@@ -\S+ \+(\d+)(?:,(\d+))? @@', diff, re.M):
        start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
        # A deletion (count 0) lies between `start` and the next line.
        lines.update(range(start, start + count) if count else
                     (start, start + 1))
    source = (tree / path).read_text()
    text = source.splitlines()
    # Blank lines and comments between classes belong to none.
    lines = {line for line in lines if line <= len(text) and
             text[line - 1].strip() and
             not text[line - 1].lstrip().startswith('#')}
    if not lines:
        return None
    classes = [node for node in ast.parse(source).body
               if isinstance(node, ast.ClassDef)]
    at_base = methods_of(process.git('show', f'base:{path}',
                                     cwd=tree).stdout)
    whole, methods = set(), {}
    for line in lines:
        owner = [node for node in classes
                 if span(node)[0] <= line <= span(node)[1]]
        if not owner:
            return None
        [cls] = owner
        function = [node.name for node in cls.body
                    if isinstance(node, FUNCTIONS)
                    and span(node)[0] <= line <= span(node)[1]]
        if function and function[0].startswith('test'):
            methods.setdefault(cls.name, set()).update(function)
        elif not function or function[0] in FIXTURE_METHODS:
            whole.add(cls.name)
        elif (cls.name, function[0]) in at_base:
            # An existing helper: the tests that call it, in this class
            # and the classes deriving from it.
            for node in classes:
                if node is cls or cls.name in names_of(node.bases):
                    found = callers(node, function[0])
                    if not found and node is cls:
                        whole.add(cls.name)
                    methods.setdefault(node.name, set()).update(found)
        # A helper method the series adds serves only the tests it adds
        # or changes: no other test can call it.

    def derived(names):
        found = set(names)
        grown = True
        while grown:
            before = len(found)
            found.update(node.name for node in classes
                         if names_of(node.bases) & found)
            grown = len(found) > before
        return found

    whole = derived(whole)
    tests = set(whole)
    for name, changed in methods.items():
        for cls in derived({name}) - whole:
            tests.update(f'{cls}.{method}' for method in changed)
    # A mixin (a class of no base but object) holds no test of its own:
    # the classes deriving from it run its tests.
    mixins = {node.name for node in classes
              if names_of(node.bases) <= {'object'}}
    return sorted(test for test in tests
                  if test.split('.')[0] not in mixins)


def filter_for(tree, arg):
    """A test module or package name becomes an anchored stestr regex."""
    path = tree / arg.replace('.', '/')
    if re.fullmatch(r'[\w.]+', arg) and (
            path.with_suffix('.py').exists() or path.is_dir()):
        return rf'^{re.escape(arg)}\.'
    return arg


def split_filters(project, tree, args):
    """Route test module names and regexes to the unit or functional run."""
    filters = [filter_for(tree, arg) for arg in args]
    functional_package = module_of(project.functional_tests) + '.'
    functional = [f for f in filters
                  if f.lstrip('^').replace('\\.', '.').startswith(
                      functional_package)]
    return [f for f in filters if f not in functional], functional


def regex_for_modules(entries):
    """Anchored stestr regexes for the selection's entries: a module or a
    class selects the tests it holds, a test method itself, its scenarios
    ('test_x(name)') and its ddt cases ('test_x_1_value').
    """
    return [rf'^{re.escape(entry)}(\.|\(|_\d|$)' for entry in entries]
