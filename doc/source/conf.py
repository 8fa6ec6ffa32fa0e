# Sphinx configuration of this repository's manual (tools/series ci
# builds it with -W).
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path[:0] = [ROOT, os.path.join(os.path.dirname(__file__), '_ext')]

project = 'Nova volume-multiattach-enhancements: the patch series'
extensions = ['series_patches', 'package_imports']
exclude_patterns = ['_build']
html_theme = 'alabaster'
