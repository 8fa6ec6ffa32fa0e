"""Tests of series.cloud.rbd_probe's digest: it covers every allocated
extent's place and bytes, in order, and nothing unallocated.
"""

import unittest

from series.cloud import rbd_probe


class Image:
    """An RBD image as the probe reads it: its size, the extents
    diff_iterate() reports (in the order given) and read().
    """

    def __init__(self, size, extents, data):
        self.size_bytes, self.extents, self.data = size, extents, data

    def size(self):
        return self.size_bytes

    def diff_iterate(self, offset, length, from_snapshot, callback):
        for extent in self.extents:
            callback(*extent)

    def read(self, offset, length):
        return bytes(self.data[offset:offset + length])


def image(extents, data=None, size=1 << 20):
    return Image(size, extents, data or bytearray(size))


class DigestTest(unittest.TestCase):

    EXTENTS = [(0, 4096, True), (8192, 4096, True)]

    def test_a_write_in_an_allocated_extent_changes_it(self):
        data = bytearray(1 << 20)
        before = rbd_probe.digest(image(self.EXTENTS, data))
        data[8192 + 100] = 1
        self.assertNotEqual(before, rbd_probe.digest(image(self.EXTENTS,
                                                           data)))

    def test_bytes_outside_the_allocated_extents_do_not_count(self):
        data = bytearray(1 << 20)
        before = rbd_probe.digest(image(self.EXTENTS, data))
        data[4096 + 100] = 1
        self.assertEqual(before, rbd_probe.digest(image(self.EXTENTS, data)))

    def test_an_extent_that_does_not_exist_does_not_count(self):
        data = bytearray(1 << 20)
        data[8192] = 1
        self.assertEqual(
            rbd_probe.digest(image(self.EXTENTS[:1], data)),
            rbd_probe.digest(image(self.EXTENTS[:1] + [(8192, 4096, False)],
                                   data)))

    def test_the_same_bytes_elsewhere_give_another_digest(self):
        self.assertNotEqual(rbd_probe.digest(image([(0, 4096, True)])),
                            rbd_probe.digest(image([(4096, 4096, True)])))

    def test_the_order_extents_are_reported_in_does_not_count(self):
        data = bytearray(range(256)) * 4096
        self.assertEqual(
            rbd_probe.digest(image(self.EXTENTS, data)),
            rbd_probe.digest(image(self.EXTENTS[::-1], data)))

    def test_an_extent_larger_than_a_chunk_is_read_whole(self):
        size = 3 * rbd_probe.CHUNK
        data = bytearray(size)
        extents = [(0, size, True)]
        before = rbd_probe.digest(image(extents, data, size))
        data[-1] = 1
        self.assertNotEqual(before, rbd_probe.digest(image(extents, data,
                                                           size)))


if __name__ == '__main__':
    unittest.main()
