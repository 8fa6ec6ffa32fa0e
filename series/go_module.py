"""A Go module release as a pinned base: its zip from the Go module proxy
(`go mod download -json`), verified against the `h1:` hash projects.toml
pins (the line go.sum carries for it), and unpacked. One of the release
formats of series.pristine (a Python sdist's is series.sdist).

The go command runs with the toolchain installed here (GOTOOLCHAIN=local)
and with its module and build caches under .work/go, so that a clone
holds all it fetched. The checksum database is not asked: the base is
verified against its pin here, and the module's dependencies against the
module's own go.sum by the go command.
"""

import base64
import dataclasses
import hashlib
import json
import shutil
import tempfile
import zipfile

from series import config
from series import process

# What the release is called.
WHAT = 'module zip'


def cache_directory():
    """Where the go command keeps the modules it fetched and its builds."""
    return config.ROOT / '.work' / 'go'


def build_cache():
    return cache_directory() / 'cache'


def environment():
    return {'GOTOOLCHAIN': 'local', 'GOSUMDB': 'off',
            'GOMODCACHE': str(cache_directory() / 'modcache'),
            'GOCACHE': str(build_cache()),
            'GOFLAGS': '-modcacherw -buildvcs=false'}


def go(*args, cwd, check=True):
    return process.run(['go', *args], cwd=cwd, env=environment(),
                       check=check)


def hash1(archive):
    """The `h1:` hash of a module zip, as the go command computes it
    (golang.org/x/mod/sumdb/dirhash.Hash1): a SHA-256 of the lines
    "<sha256 of the file>  <name in the zip>" in the order of the names.
    """
    with zipfile.ZipFile(archive) as module_zip:
        names = sorted(module_zip.namelist())
        if any('\n' in name for name in names):
            raise config.SeriesError(f'{archive}: a file name with a newline')
        summary = ''.join(
            f'{hashlib.sha256(module_zip.read(name)).hexdigest()}  {name}\n'
            for name in names)
    return 'h1:' + base64.b64encode(
        hashlib.sha256(summary.encode()).digest()).decode()


def download(module, version, proxy=None, cache=None):
    """What `go mod download -json` says of module@version (its Zip
    path, its Sum); an error it reports is raised. `proxy` is a GOPROXY
    in place of the go command's, `cache` a module cache in place of
    .work/go's.
    """
    overrides = {'GOPROXY': proxy, 'GOMODCACHE': cache and str(cache)}
    with tempfile.TemporaryDirectory() as empty:
        proc = process.run(
            ['go', 'mod', 'download', '-json', f'{module}@{version}'],
            cwd=empty, check=False,
            env=dict(environment(), **{name: value for name, value
                                       in overrides.items() if value}))
    output = proc.stdout
    start = output.find('{')
    info = json.loads(output[start:]) if start >= 0 else {}
    if proc.returncode or info.get('Error') or 'Zip' not in info:
        raise config.SeriesError(
            f'go mod download {module}@{version} failed: '
            f'{info.get("Error") or output.strip()}')
    return info


def archive(project):
    """Where the module zip is downloaded to."""
    return project.downloads / f'{project.name}-{project.version}.zip'


def fetch(project):
    """The verified module zip of `project`, downloaded if needed."""
    path = archive(project)
    if path.exists():
        if hash1(path) == project.h1:
            return path
        process.say(f'{path.name}: cached file has the wrong h1 hash, '
                    'downloading again')
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    process.say(f'{project.name}: downloading {project.module}@'
                f'{project.version} from the Go module proxy')
    info = download(project.module, project.version)
    actual = hash1(info['Zip'])
    if actual != project.h1:
        raise config.SeriesError(
            f'{project.module}@{project.version}: {actual} does not match '
            f'the pin {project.h1} in projects.toml; refusing to use it')
    shutil.copyfile(info['Zip'], path)
    return path


def unpack(project, destination):
    """The verified module zip's files, without their module@version/
    prefix, into `destination`, writable.
    """
    archive = fetch(project)
    prefix = f'{project.module}@{project.version}/'
    with zipfile.ZipFile(archive) as module_zip:
        for member in module_zip.infolist():
            if not member.filename.startswith(prefix):
                raise config.SeriesError(f'{archive}: {member.filename} is '
                                         f'not under {prefix}')
            path = destination / member.filename[len(prefix):]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(module_zip.read(member))


def verified(project):
    return hash1(archive(project)) == project.h1


def describe(project):
    return f'module zip of {project.module}, {project.h1}'


def published_pin(project, version, index=None):
    """The h1 hash of the module zip of `version` that the Go module
    proxy (`index`, or the go command's GOPROXY) serves, as the go command
    computes it; the zip it hashed is kept as the download of `version`,
    so that what is unpacked is what was hashed. It is fetched into a
    module cache of its own, so that a copy already in .work/go does not
    answer for the proxy. The checksum database is not asked (it is not
    reachable here): the pin is what the proxy served, as a package
    index's digest is what the index publishes.
    """
    with tempfile.TemporaryDirectory() as cache:
        info = download(project.module, version, proxy=index, cache=cache)
        pin = hash1(info['Zip'])
        path = archive(dataclasses.replace(project, version=version))
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(info['Zip'], path)
    return pin
