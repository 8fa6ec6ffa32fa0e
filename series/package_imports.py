"""Which of the `series` package's modules each of its modules imports,
read from the source (ast), for the manual's `package-imports`
directive: the drawing of the package is made from the code when the
manual is built, so it cannot drift from it.
"""

import ast

from series import config

PACKAGE = 'series'


def module_name(path, root):
    """`series/cloud/deploy.py` -> `series.cloud.deploy`."""
    parts = path.relative_to(root).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def imported(tree, known):
    """The modules of `known` that a module's syntax tree imports: `from
    series.cloud import deploy` names series.cloud.deploy, `from
    series.cloud.client import check` series.cloud.client.
    """
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names
                         if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                candidate = f'{node.module}.{alias.name}'
                found.add(candidate if candidate in known else node.module)
    return found & set(known)


def imports(root=None):
    """{module: sorted modules of the package it imports} of every module
    of the package but its tests.
    """
    root = root or config.ROOT
    paths = [path for path in sorted((root / PACKAGE).rglob('*.py'))
             if 'tests' not in path.relative_to(root).parts]
    known = {module_name(path, root): path for path in paths}
    return {name: sorted(imported(ast.parse(path.read_text()), known) -
                         {name})
            for name, path in sorted(known.items())}


def cycles(graph):
    """The import cycles of `graph`, each as a list of modules."""
    found, state = [], {}

    def visit(module, path):
        state[module] = 'open'
        for target in graph.get(module, ()):
            if state.get(target) == 'open':
                found.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = 'done'
    for module in graph:
        if module not in state:
            visit(module, [module])
    return found


def imports_rst(root=None):
    """The import list as reStructuredText lines."""
    lines = []
    for module, targets in imports(root).items():
        if module == PACKAGE:
            continue
        short = [target.removeprefix(f'{PACKAGE}.') for target in targets
                 if target != PACKAGE]
        lines.append(f'* ``{module.removeprefix(PACKAGE + ".")}``: ' +
                     (', '.join(f'``{name}``' for name in short) or
                      'nothing of the package'))
    return lines
