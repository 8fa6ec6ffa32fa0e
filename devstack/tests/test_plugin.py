"""Tests of devstack/plugin.sh, run here without devstack or network.

The plugin is sourced by bash with the few devstack functions it uses
stubbed, against git checkouts made from the pinned release sdists (the
pristine tree committed and tagged with its version, as a checkout of the
release tag would be).

Run: python3 -m unittest discover -s devstack/tests
"""

import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from series import base  # noqa: E402
from series import checks  # noqa: E402
from series import config  # noqa: E402
from series import queue  # noqa: E402

GIT_ENV = {'GIT_CONFIG_GLOBAL': os.devnull, 'GIT_CONFIG_NOSYSTEM': '1',
           'GIT_AUTHOR_NAME': 'test', 'GIT_AUTHOR_EMAIL': 'test@localhost',
           'GIT_COMMITTER_NAME': 'test',
           'GIT_COMMITTER_EMAIL': 'test@localhost'}

# devstack's functions, as far as the plugin uses them.
STUBS = '''
function die { shift; echo "ERROR: $*" >&2; exit 1; }
function is_service_enabled {
    local service
    for service in "$@"; do
        [[ ,$ENABLED_SERVICES, == *,$service,* ]] && return 0
    done
    return 1
}
function git_clone {
    # devstack keeps an existing checkout unless RECLONE=True.
    [[ -d $2/.git ]] || { echo "git_clone would clone $1 to $2" >&2; exit 3; }
}
function iniset { echo "$*" >> "$INISET_LOG"; }
function trueorfalse {
    local value=${!2:-$1}
    [[ ${value,,} == true ]] && echo True || echo False
}
source "$PLUGIN_DIR/settings"
source "$PLUGIN_DIR/plugin.sh" "$@"
'''


def git(cwd, *args):
    return subprocess.run(['git', *args], cwd=cwd, check=True, text=True,
                          capture_output=True,
                          env=dict(os.environ, **GIT_ENV)).stdout.strip()


def change_ids(project):
    ids = []
    for name in queue.read_series(project):
        text = (project.patches / name).read_text()
        ids.append(checks.CHANGE_ID.findall(text)[-1])
    return ids


class DevstackPluginTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.projects = {name: config.get_project(name)
                        for name in ('nova', 'cinder')}
        cls.origin = Path(tempfile.mkdtemp(prefix='devstack-origin-'))
        for name, project in cls.projects.items():
            checkout = cls.origin / name
            shutil.copytree(base.unpack_pristine(project), checkout,
                            symlinks=True)
            git(checkout, 'init', '-q', '-b', 'main')
            git(checkout, 'add', '-A', '-f')
            git(checkout, 'commit', '-q', '-m', f'{name} {project.version}')
            git(checkout, 'tag', project.version)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.origin, ignore_errors=True)

    def setUp(self):
        self.dest = Path(tempfile.mkdtemp(prefix='devstack-dest-'))
        self.addCleanup(shutil.rmtree, self.dest, ignore_errors=True)
        for name in self.projects:
            git(self.dest, 'clone', '-q', str(self.origin / name), name)
        self.iniset_log = self.dest / 'iniset.log'

    def stack(self, phase, **env):
        return self.plugin('stack', phase, **env)

    def plugin(self, *args, **env):
        variables = {
            'PLUGIN_DIR': str(ROOT / 'devstack'),
            'ENABLED_SERVICES': 'n-api,n-cpu,c-api,c-vol,tempest,nova,cinder',
            'NOVA_REPO': 'https://opendev.org/openstack/nova.git',
            'NOVA_DIR': str(self.dest / 'nova'), 'NOVA_BRANCH': '34.0.0',
            'CINDER_REPO': 'https://opendev.org/openstack/cinder.git',
            'CINDER_DIR': str(self.dest / 'cinder'),
            'CINDER_BRANCH': '29.0.0',
            'TEMPEST_CONFIG': '/etc/tempest/tempest.conf',
            'INISET_LOG': str(self.iniset_log),
        }
        variables.update(env)
        return subprocess.run(
            ['bash', '-c', STUBS, 'plugin', *args],
            text=True, capture_output=True,
            env=dict(os.environ, **GIT_ENV, **variables))

    def applied(self, name):
        project = self.projects[name]
        log = git(self.dest / name, 'log', '--reverse', '--format=%B',
                  f'{project.version}..HEAD')
        return checks.CHANGE_ID.findall(log)

    def test_pre_install_applies_both_series(self):
        result = self.stack('pre-install')
        self.assertEqual(0, result.returncode, result.stderr)
        for name, project in self.projects.items():
            self.assertEqual(change_ids(project), self.applied(name))
            self.assertEqual('', git(self.dest / name, 'status',
                                     '--porcelain', '--untracked-files=no'))

    def test_second_stack_changes_nothing(self):
        self.assertEqual(0, self.stack('pre-install').returncode)
        heads = {name: git(self.dest / name, 'rev-parse', 'HEAD')
                 for name in self.projects}
        result = self.stack('pre-install')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('nova: the series is already applied', result.stdout)
        self.assertIn('cinder: the series is already applied', result.stdout)
        for name in self.projects:
            self.assertEqual(heads[name],
                             git(self.dest / name, 'rev-parse', 'HEAD'))

    def _move_nova_off_its_base(self):
        nova = self.dest / 'nova'
        (nova / 'DEVSTACK_TEST').write_text('a commit after the release\n')
        git(nova, 'add', 'DEVSTACK_TEST')
        git(nova, 'commit', '-q', '-m', 'Something after 34.0.0')
        return git(nova, 'rev-parse', 'HEAD')

    def test_refuses_a_checkout_on_another_base(self):
        head = self._move_nova_off_its_base()
        result = self.stack('pre-install')
        self.assertEqual(1, result.returncode)
        self.assertIn('not at nova 34.0.0', result.stderr)
        self.assertIn('NOVA_BRANCH=34.0.0', result.stderr)
        self.assertEqual(head, git(self.dest / 'nova', 'rev-parse', 'HEAD'))

    def test_refuses_a_checkout_without_the_release_tag(self):
        git(self.dest / 'nova', 'tag', '-d', '34.0.0')
        result = self.stack('pre-install')
        self.assertEqual(1, result.returncode)
        self.assertIn('has no tag 34.0.0', result.stderr)
        self.assertEqual([], self.applied('cinder'))

    def test_force_tries_another_base(self):
        self._move_nova_off_its_base()
        result = self.stack('pre-install', MULTIATTACH_SERIES_FORCE='True')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(change_ids(self.projects['nova']),
                         self.applied('nova'))

    def test_refuses_reclone(self):
        result = self.stack('pre-install', RECLONE='True')
        self.assertEqual(1, result.returncode)
        self.assertIn('RECLONE=True', result.stderr)
        self.assertEqual([], self.applied('nova'))

    def test_disabled_services_are_left_alone(self):
        result = self.stack('pre-install', ENABLED_SERVICES='n-api,nova')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(change_ids(self.projects['nova']),
                         self.applied('nova'))
        self.assertEqual([], self.applied('cinder'))

    def test_settings_enable_volume_multiattach(self):
        result = subprocess.run(
            ['bash', '-c', 'function trueorfalse { echo False; }; '
             f'source {ROOT}/devstack/settings; '
             'echo $ENABLE_VOLUME_MULTIATTACH'],
            text=True, capture_output=True, check=True)
        self.assertEqual('True', result.stdout.strip())

    def test_test_config_sets_tempest(self):
        result = self.stack('test-config')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(
            ['/etc/tempest/tempest.conf compute-feature-enabled '
             'volume_multiattach True',
             '/etc/tempest/tempest.conf compute-feature-enabled '
             'volume_attach_read_only True',
             '/etc/tempest/tempest.conf compute max_microversion 2.105'],
            self.iniset_log.read_text().splitlines())

    def test_other_phases_do_nothing(self):
        for phase in ('install', 'post-config', 'extra'):
            result = self.stack(phase)
            self.assertEqual(0, result.returncode, result.stderr)
        self.assertFalse(self.iniset_log.exists())
        self.assertEqual([], self.applied('nova'))

    def test_unstack_and_clean_keep_the_patched_checkouts(self):
        self.assertEqual(0, self.stack('pre-install').returncode)
        for action in ('unstack', 'clean'):
            result = self.plugin(action)
            self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(change_ids(self.projects['nova']),
                         self.applied('nova'))


if __name__ == '__main__':
    unittest.main()
