# Sphinx configuration for the specs in this directory, modelled on
# nova-specs' doc/source/conf.py with only what Sphinx itself provides:
# nova-specs' 'redirect' (a local extension of its own) and 'yasfb' (an RSS
# feed) are not here, and the theme is Sphinx's default rather than
# openstackdocstheme, so that the build needs nothing but Sphinx. Build
# from the repository root with:
#
#   .work/venvs/nova/bin/python -m sphinx -W --keep-going -q -b html \
#       specs /tmp/spec-build

import datetime

# -- General configuration ----------------------------------------------------

extensions = [
    'sphinx.ext.todo',
]

todo_include_todos = True

# The master toctree document.
root_doc = 'index'

# Not specs: the checks of the specs and their data.
exclude_patterns = ['tests', 'template-titles.json']

# General information about the project.
project = 'Nova and Cinder Specs'
copyright = '%s, OpenStack Nova and Cinder teams' % datetime.date.today().year

# The name of the Pygments (syntax highlighting) style to use.
pygments_style = 'native'

version = ''
release = ''

# -- Options for HTML output --------------------------------------------------

# If false, no module index is generated.
html_domain_indices = False

# If false, no index is generated.
html_use_index = False
