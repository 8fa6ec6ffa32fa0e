"""tools/series, the patch queue tool, as a package: one module per concern.

tools/series only puts the repository on sys.path and calls cli.main().
Modules import each other as modules (config.ROOT, queue.apply), so a
test patches one attribute in one place and every module sees it.

doc/source/design.rst ("Modules") maps the modules in layering order:
a module imports only modules above it there, so there are no import
cycles. series/tests/ holds the unit tests, one test module per
module tested (test_<module>.py) and the shared fixture (tests/base.py).
"""
