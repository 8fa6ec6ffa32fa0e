"""Tests of series.cloud.probes: the disks of a domain, per volume, as its
libvirt XML and QEMU's query-block show them.
"""

import unittest

from series.cloud import probes

DOMAIN_XML = """\
<domain type='qemu'>
  <devices>
    <disk type='network' device='disk'>
      <source protocol='rbd' name='volumes/volume-aaaa'/>
      <target dev='vda' bus='virtio'/>
      <readonly/>
      <shareable/>
      <serial>aaaa</serial>
      <alias name='ua-aaaa'/>
    </disk>
    <disk type='network' device='disk'>
      <source protocol='rbd' name='volumes/volume-bbbb'/>
      <target dev='vdb' bus='virtio'/>
      <shareable/>
      <serial>bbbb</serial>
      <alias name='ua-bbbb'/>
    </disk>
    <disk type='file' device='cdrom'>
      <target dev='hdd' bus='ide'/>
      <alias name='ide0-1-1'/>
    </disk>
  </devices>
</domain>
"""


QUERY_BLOCK = """\
{"return": [
  {"device": "", "qdev": "/machine/peripheral/ua-aaaa/virtio-backend",
   "inserted": {"ro": true}},
  {"device": "", "qdev": "/machine/peripheral/ua-bbbb/virtio-backend",
   "inserted": {"ro": false}},
  {"device": "ide0-1-1", "qdev": "", "removable": true}
]}
"""


class DisksTest(unittest.TestCase):

    def test_xml_and_qemu_views_per_volume(self):
        self.assertEqual({'aaaa': ('vda', True, True),
                          'bbbb': ('vdb', False, False)},
                         probes.disks(DOMAIN_XML, QUERY_BLOCK))

    def test_a_disk_qemu_does_not_list_has_no_qemu_view(self):
        self.assertEqual({'aaaa': ('vda', True, None),
                          'bbbb': ('vdb', False, None)},
                         probes.disks(DOMAIN_XML, '{"return": []}'))
