"""Tests of series.cloud.databases that need no cloud: the rows of a
query, the rollback's SQL as the packagers' page gives it, and what
says the cloud is back on the series.
"""

import unittest
from unittest import mock

from series.cloud import databases
from series.cloud import hosts
from series import config


class SeriesStateTest(unittest.TestCase):
    """Back on the series: the columns, the alembic head, version 76."""

    def state(self, **changes):
        columns = {'mae_nova.block_device_mapping': True,
                   'mae_nova.shadow_block_device_mapping': True}
        state = {'attach_mode columns': columns,
                 'alembic': 'head',
                 'compute versions': {host.name: 76
                                      for host in hosts.HOSTS}}
        state.update(changes)
        return databases.series_problems(state, 'head')

    def test_the_series_passes(self):
        self.assertEqual([], self.state())

    def test_a_missing_column_fails(self):
        self.assertEqual(['mae_nova.block_device_mapping has no attach_mode'],
                         self.state(**{'attach_mode columns': {
                             'mae_nova.block_device_mapping': False}}))

    def test_the_pristine_head_fails(self):
        self.assertEqual(["alembic head ab450ba04102, not the series' head"],
                         self.state(alembic='ab450ba04102'))

    def test_a_compute_left_at_74_fails(self):
        versions = {host.name: 76 for host in hosts.HOSTS}
        versions[hosts.HOSTS[1].name] = 74
        [problem] = self.state(**{'compute versions': versions})
        self.assertIn('nova-compute service versions', problem)


class RollbackSQLTest(unittest.TestCase):

    def test_the_rollback_runs_the_sql_the_packagers_page_gives(self):
        page = ' '.join((config.ROOT / 'doc/source/packagers.rst')
                        .read_text().split())
        for sql in (databases.ROLLBACK_SQL, databases.API_ROLLBACK_SQL,
                    databases.READ_ONLY_BDMS.replace('SELECT ', '')):
            self.assertIn(' '.join(sql.split()), page)


class QueryTest(unittest.TestCase):

    def test_query_rows_with_nulls(self):
        with mock.patch.object(databases.process, 'run') as run:
            run.return_value.stdout = 'a\tNULL\nb\t75\n'
            self.assertEqual([['a', None], ['b', '75']],
                             databases.query('mae_nova', 'SELECT 1'))
        self.assertEqual(['mariadb', '--protocol=socket', '-u', 'root', '-N',
                          '-B', '-e', 'SELECT 1', 'mae_nova'],
                         run.call_args.args[0])


if __name__ == '__main__':
    unittest.main()
