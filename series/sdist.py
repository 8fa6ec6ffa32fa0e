"""A Python release as a pinned base: its sdist from the package index,
verified against the sha256 projects.toml pins, and unpacked. One of the
release formats of series.pristine (a Go module's is series.go_module).
"""

import hashlib
from pathlib import Path
import re
import sys
import tempfile
import urllib.request

from series import config
from series import process

# What the release is called.
WHAT = 'sdist'
PACKAGE_INDEX = 'https://pypi.org/simple'


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def check_constraints(project):
    """The constraints file projects.toml names must be in the repository."""
    if not project.constraints:
        raise config.SeriesError(f'projects.toml names no constraints file '
                                 f'for {project.name}')
    if not project.constraints_file.is_file():
        raise config.SeriesError(f'{project.constraints} (the constraints of '
                                 f'{project.name} in projects.toml) is not in '
                                 f'the repository')


def archive(project):
    """Where the sdist is downloaded to."""
    return project.downloads / f'{project.name}-{project.version}.tar.gz'


def fetch(project):
    """Return the path of the verified sdist, downloading it if needed."""
    # Every input is checked before anything is downloaded.
    check_constraints(project)
    path = archive(project)
    if path.exists():
        if sha256_of(path) == project.sha256:
            return path
        process.say(f'{path.name}: cached file has the wrong sha256, '
                    'downloading again')
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'{project.name}: downloading '
                f'{project.name}=={project.version} sdist from the package '
                'registry')
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        process.run([sys.executable, '-m', 'pip', 'download', '--no-deps',
                     '--no-binary', ':all:', '--dest', tmp,
                     f'{project.name}=={project.version}'])
        found = list(Path(tmp).glob('*.tar.gz'))
        if len(found) != 1:
            raise config.SeriesError(f'pip download gave {found}, expected '
                                     'one sdist')
        actual = sha256_of(found[0])
        if actual != project.sha256:
            raise config.SeriesError(
                f'{found[0].name}: sha256 {actual} does not match the pin '
                f'{project.sha256} in projects.toml; refusing to use it')
        found[0].rename(path)
    return path


def unpack(project, destination):
    """The verified sdist's tree, without its top directory, into
    `destination`.
    """
    process.run(['tar', '-xzf', fetch(project), '-C', destination,
                 '--strip-components=1'])


def verified(project):
    return sha256_of(archive(project)) == project.sha256


def describe(project):
    return f'sdist, sha256 {project.sha256}'


def published_pin(project, version, index=None):
    """The sha256 of the sdist of `version` that a PEP 503 index (by
    default PACKAGE_INDEX) publishes in its links.
    """
    name = project.name
    url = f'{(index or PACKAGE_INDEX).rstrip("/")}/{name}/'
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            page = response.read().decode()
    except OSError as error:
        raise config.SeriesError(
            f'cannot read {url} ({error}); give the digest with --pin')
    # The sdist of `version`, e.g. cinder-29.0.0.0rc2.tar.gz#sha256=...
    pattern = (rf'{re.escape(name)}-{re.escape(version)}\.tar\.gz'
               rf'#sha256=([0-9a-f]{{64}})')
    match = re.search(pattern, page)
    if not match:
        raise config.SeriesError(
            f'{url} lists no sdist of {name} {version}')
    return match.group(1)
