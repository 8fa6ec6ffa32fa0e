"""The numbers doc/source/packagers.rst says the series takes are those
its patches take: each read from the lines the patches add (and the
release's own from the lines they remove) and found in its row of the
page's table.
"""

import re
import unittest

from series import config

PAGE = config.ROOT / 'doc' / 'source' / 'packagers.rst'


def table_rows(text):
    """{label: its text, continuation lines joined} of the page's table
    of the numbers the series takes (the first simple table).
    """
    lines = text.splitlines()
    borders = [n for n, line in enumerate(lines)
               if re.fullmatch(r'=+ +=+', line)]
    width = lines[borders[0]].index(' ')
    rows, label = {}, None
    for line in lines[borders[0] + 1:borders[1]]:
        if line[:width].strip():
            label = line[:width].strip()
            rows[label] = line[width:].strip()
        elif label and line.strip():
            rows[label] += ' ' + line.strip()
    return rows


def patch_lines(project, sign, pattern):
    """The distinct values of `pattern`'s group in the lines the project's
    patches add (sign '+') or remove ('-').
    """
    found = set()
    for patch in sorted((config.ROOT / 'patches' / project).glob('*.patch')):
        for line in patch.read_text().splitlines():
            if line.startswith(sign) and not line.startswith(sign * 3):
                match = re.search(pattern, line[1:])
                if match:
                    found.add(match.group(1))
    return found


class NumbersTest(unittest.TestCase):

    def setUp(self):
        self.rows = table_rows(PAGE.read_text())

    def taken(self, project, pattern, sign='+'):
        [value] = patch_lines(project, sign, pattern)
        return value

    def assert_row_says(self, label, *values):
        for value in values:
            self.assertRegex(self.rows[label], rf'(?<![\d.]){re.escape(value)}'
                             rf'(?![\d])', label)

    def test_the_compute_api_microversion(self):
        pattern = r"^_MAX_API_VERSION = '([\d.]+)'"
        self.assert_row_says('compute API microversion',
                             self.taken('nova', pattern),
                             self.taken('nova', pattern, sign='-'))

    def test_the_rpc_apis(self):
        self.assert_row_says(
            'compute RPC API',
            self.taken('nova', r'^\s+\* (6\.\d+) - .*attach_mode'))
        self.assert_row_says(
            'ComputeTaskAPI',
            self.taken('nova', r'^\s+(1\.\d+) - .*attach_mode'))

    def test_the_service_versions(self):
        versions = patch_lines('nova', '+', r'^SERVICE_VERSION = (\d+)')
        self.assertEqual({'75', '76'}, versions)
        self.assert_row_says('service version', *versions)

    def test_the_alembic_revision(self):
        self.assert_row_says(
            'alembic revision',
            self.taken('nova', r"^revision = '(\w+)'"),
            self.taken('nova', r"^down_revision = '(\w+)'"))

    def test_the_object_versions(self):
        versions = patch_lines('nova', '+', r"^    # Version (1\.\d+): Added")
        self.assertEqual({'1.1', '1.16', '1.17', '1.22'}, versions)
        self.assert_row_says('objects', *versions)

    def test_the_block_storage_microversion(self):
        pattern = r'^_MAX_API_VERSION = "([\d.]+)"'
        self.assert_row_says('block storage microversion',
                             self.taken('cinder', pattern),
                             self.taken('cinder', pattern, sign='-'))

    def test_a_number_the_page_does_not_give_fails(self):
        self.rows['service version'] = '75 (the API refuses ro below it)'
        with self.assertRaises(AssertionError):
            self.test_the_service_versions()


if __name__ == '__main__':
    unittest.main()
