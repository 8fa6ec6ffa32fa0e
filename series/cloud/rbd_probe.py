"""What a volume's RBD image holds, read from the host with librbd: the
scenario's check of the guest's writes that does not trust the guest,
libvirt or QEMU.

Run with the cloud virtualenv's Python, which has Debian's rados and rbd
modules (series/cloud/service_venv.py), with the Ceph configuration and
the pools to look for images in (the first that has it); reads a JSON
list of requests on stdin

    [{"image": "volume-ID", "digest": true, "reads": [[offset, length]]}]

and prints a JSON list of answers, in order:

    [{"digest": "sha256 of every allocated extent", "reads": ["hex"]}]

The digest covers the image's allocated extents (offset, length and
bytes, in order), so it changes with any write, and costs only what the
image holds (a 1 GiB volume made from the 48 MiB guest image reads 48
MiB), not its size.
"""

import hashlib
import json
import sys

CHUNK = 4 << 20


def digest(image):
    extents = []
    image.diff_iterate(0, image.size(), None,
                       lambda offset, length, exists: extents.append(
                           (offset, length, exists)))
    found = hashlib.sha256()
    for offset, length, exists in sorted(extents):
        if not exists:
            continue
        found.update(f'{offset}:{length}:'.encode())
        for start in range(offset, offset + length, CHUNK):
            found.update(image.read(start, min(CHUNK,
                                               offset + length - start)))
    return found.hexdigest()


def answer(ioctxs, request):
    import rbd
    for pool, ioctx in ioctxs:
        try:
            image = rbd.Image(ioctx, request['image'], read_only=True)
        except rbd.ImageNotFound:
            continue
        with image:
            return {'pool': pool,
                    'digest': digest(image) if request.get('digest')
                    else None,
                    'reads': [image.read(offset, length).hex()
                              for offset, length in request.get('reads',
                                                                ())]}
    raise SystemExit(f'{request["image"]}: in none of the pools '
                     f'{[pool for pool, _ in ioctxs]}')


def main(ceph_conf, *pools):
    import rados
    requests = json.load(sys.stdin)
    with rados.Rados(conffile=ceph_conf) as cluster:
        ioctxs = [(pool, cluster.open_ioctx(pool)) for pool in pools]
        try:
            json.dump([answer(ioctxs, request) for request in requests],
                      sys.stdout)
        finally:
            for _, ioctx in ioctxs:
                ioctx.close()


if __name__ == '__main__':
    main(*sys.argv[1:])
