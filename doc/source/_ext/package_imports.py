"""The `package-imports` directive: which modules of the `series`
package each of its modules imports, read from the source at build time
(series.package_imports), so that the drawing cannot drift.

    .. package-imports::
"""

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

from series import package_imports


class PackageImports(Directive):

    def run(self):
        container = nodes.container()
        self.state.nested_parse(
            StringList(package_imports.imports_rst(), source='series'),
            self.content_offset, container)
        return container.children


def setup(app):
    app.add_directive('package-imports', PackageImports)
    return {'parallel_read_safe': True}
