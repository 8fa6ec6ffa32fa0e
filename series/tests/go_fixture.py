"""A Go module of the tests' own, served by a Go module proxy in a
directory (GOPROXY=file://...), so that the real go command fetches,
builds and tests it without a network.
"""

import io
import json
import os
from pathlib import Path
import zipfile

from unittest import mock

from series import go_module
from series.tests import base

MODULE = 'example.com/demo'
VERSION = 'v1.0.0'
FILES = {
    'go.mod': 'module example.com/demo\n\ngo 1.22\n',
    'demo.go': 'package demo\n\n// Double doubles.\n'
               'func Double(n int) int { return 2 * n }\n',
    'testing/demo_test.go': (
        'package testing\n\nimport (\n\t"testing"\n\n'
        '\t"example.com/demo"\n)\n\n'
        'func TestDouble(t *testing.T) {\n'
        '\tif demo.Double(2) != 4 {\n\t\tt.Fatal("2 * 2")\n\t}\n}\n'),
}


def module_zip(files=FILES, module=MODULE, version=VERSION):
    """The bytes of a module zip holding `files` under module@version/."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, 'w') as archive:
        for name, text in sorted(files.items()):
            archive.writestr(f'{module}@{version}/{name}', text)
    return data.getvalue()


def publish(directory, files=FILES, version=VERSION, module=MODULE):
    """Put the module (`version` of it, beside the versions already there)
    in a proxy directory; the zip's path.
    """
    versions = Path(directory) / module / '@v'
    versions.mkdir(parents=True, exist_ok=True)
    with open(versions / 'list', 'a') as listed:
        listed.write(f'{version}\n')
    (versions / f'{version}.info').write_text(json.dumps(
        {'Version': version, 'Time': '2026-01-01T00:00:00Z'}))
    (versions / f'{version}.mod').write_text(files['go.mod'])
    archive = versions / f'{version}.zip'
    archive.write_bytes(module_zip(files, module, version))
    return archive


def serve(test, directory, files=FILES, version=VERSION):
    """publish() the module and point the go command at the proxy
    directory for the rest of `test` (its module cache is the test's
    root's, its build cache this repository's, which the go command keeps
    safe to share); the zip's path.
    """
    archive = publish(directory, files, version)
    for patcher in (
            mock.patch.dict(os.environ, {'GOPROXY': f'file://{directory}'}),
            mock.patch.object(go_module, 'build_cache',
                              return_value=base.REPOSITORY / '.work' /
                              'go' / 'cache')):
        patcher.start()
        test.addCleanup(patcher.stop)
    return archive
