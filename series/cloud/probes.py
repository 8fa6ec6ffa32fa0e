"""What the scenario checks of each attachment, below the API, from four
places that do not trust each other: the libvirt XML and QEMU (QMP) of
the domain on the host that runs it, the guest's own report on its
serial console, and the volume's RBD image read from the machine.
"""

import json
import subprocess
import xml.etree.ElementTree as ElementTree

from series.cloud import configs
from series.cloud import guest
from series.cloud import hosts
from series.cloud import layout
from series.cloud import service_venv
from series import config

REGION_BYTES = guest.SLOT_REGION * guest.SECTOR
SLOT_BYTES = 2 * guest.SECTOR


def disks(domain_xml, query_block):
    """{serial: (target dev, readonly in the XML, ro per QEMU)}. The
    libvirt XML gives each disk's serial (Nova's volume id), alias and
    <readonly/>; QMP query-block gives what QEMU enforces, matched by
    the alias in the device's qdev path (or its device name).
    """
    qemu_ro = {}
    for block in json.loads(query_block)['return']:
        if 'inserted' not in block:
            continue
        names = {block.get('device')} | set(block.get('qdev', '').split('/'))
        for name in names - {'', None}:
            qemu_ro[name] = block['inserted']['ro']
    found = {}
    for disk in ElementTree.fromstring(domain_xml).iter('disk'):
        serial = disk.findtext('serial')
        alias = disk.find('alias')
        if not serial or alias is None:
            continue
        found[serial] = (disk.find('target').get('dev'),
                         disk.find('readonly') is not None,
                         qemu_ro.get(alias.get('name')))
    return found


def domain_disks(host, domain):
    """disks() of `domain` as the libvirtd of `host` runs it."""
    return disks(hosts.virsh(host, 'dumpxml', domain).stdout,
                 hosts.virsh(host, 'qemu-monitor-command', domain,
                             '{"execute": "query-block"}').stdout)


def rbd(requests):
    """Run rbd_probe with the cloud's Python: its answers, in order."""
    proc = subprocess.run(
        [str(service_venv.bin('python')), '-m', 'series.cloud.rbd_probe',
         str(layout.directory() / 'ceph' / 'ceph.conf'),
         *configs.CINDER_BACKENDS.values()],
        input=json.dumps(requests), text=True, cwd=config.ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise config.SeriesError(f'reading RBD images failed: '
                                 f'{proc.stderr.strip()[-500:]}')
    return json.loads(proc.stdout)


def slot_region(image, size_gib):
    """The last SLOT_REGION sectors of the RBD image of a volume, where
    every guest writes (each in its own slot): what a slot held before a
    guest could write to it.
    """
    size = size_gib << 30
    [answer] = rbd([{'image': image,
                     'reads': [[size - REGION_BYTES, REGION_BYTES]]}])
    return bytes.fromhex(answer['reads'][0])


def slots(requests):
    """[bytes of the slot] for [(RBD image, size in GiB, slot)]."""
    answers = rbd([{'image': image, 'reads': [[
        guest.slot_sector(slot, size_gib << 30) * guest.SECTOR,
        SLOT_BYTES]]} for image, size_gib, slot in requests])
    return [bytes.fromhex(answer['reads'][0]) for answer in answers]


def slot_in_region(region, slot, size_gib):
    """`slot` in a slot_region() read."""
    start = (guest.slot_sector(slot, size_gib << 30) * guest.SECTOR -
             ((size_gib << 30) - REGION_BYTES))
    return region[start:start + SLOT_BYTES]


def pool_of(image):
    """The Ceph pool that holds the RBD image."""
    [answer] = rbd([{'image': image}])
    return answer['pool']


def digests(images):
    """[digest of the whole RBD image] for each of `images`."""
    return [answer['digest'] for answer in rbd(
        [{'image': image, 'digest': True} for image in images])]
