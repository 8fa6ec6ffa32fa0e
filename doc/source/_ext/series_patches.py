"""The `series-patches` directive: the patches of patches/<project>/,
in series order, read at build time, so that the list cannot go stale.

    .. series-patches:: nova
"""

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

from series import manual


class SeriesPatches(Directive):
    required_arguments = 1

    def run(self):
        container = nodes.container()
        lines = manual.patch_list_rst(self.arguments[0])
        self.state.nested_parse(StringList(lines, source='patches'),
                                self.content_offset, container)
        return container.children


def setup(app):
    app.add_directive('series-patches', SeriesPatches)
    return {'parallel_read_safe': True}
