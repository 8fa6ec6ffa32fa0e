"""Tests of devstack/plugin.sh, run here without devstack or network.

The plugin is sourced by bash with the few devstack functions it uses
stubbed, against git checkouts made from the pinned release sdists (the
pristine tree committed and tagged with its version, as a checkout of the
release tag would be, without the sdist's PKG-INFO and egg-info, which
pbr would take the version from).

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

from series import checks  # noqa: E402
from series import config  # noqa: E402
from series import pristine  # noqa: E402
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
# stackrc and lib/libraries, for the library the plugin patches.
declare -A GITREPO GITBRANCH GITDIR
GITREPO["os-traits"]=${OS_TRAITS_REPO:-https://opendev.org/openstack/os-traits.git}
GITBRANCH["os-traits"]=${OS_TRAITS_BRANCH:-master}
GITDIR["os-traits"]=$DEST/os-traits
function git_clone_by_name {
    local name=$1
    git_clone "${GITREPO[$name]}" "${GITDIR[$name]}" "${GITBRANCH[$name]}"
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


class PluginTestCase(unittest.TestCase):
    """Runs the plugin against fresh checkouts of CHECKOUTS in a $DEST of
    its own per test.
    """

    CHECKOUTS = ('os-traits', 'nova', 'cinder')
    ENABLED_SERVICES = 'n-api,n-cpu,c-api,c-vol,tempest,nova,cinder'

    @classmethod
    def setUpClass(cls):
        cls.projects = {name: config.get_project(name)
                        for name in cls.CHECKOUTS}
        cls.origin = Path(tempfile.mkdtemp(prefix='devstack-origin-'))
        for name, project in cls.projects.items():
            checkout = cls.origin / name
            shutil.copytree(pristine.unpack_pristine(project), checkout,
                            symlinks=True)
            (checkout / 'PKG-INFO').unlink()
            for info in checkout.glob('*.egg-info'):
                shutil.rmtree(info)
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
            'PLUGIN_DIR': str(ROOT / 'devstack'), 'DEST': str(self.dest),
            'OS_TRAITS_BRANCH': '3.9.0',
            'ENABLED_SERVICES': self.ENABLED_SERVICES,
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


class DevstackPluginTest(PluginTestCase):

    def test_pre_install_applies_every_series(self):
        result = self.stack('pre-install')
        self.assertEqual(0, result.returncode, result.stderr)
        for name, project in self.projects.items():
            self.assertEqual(change_ids(project), self.applied(name))
            self.assertEqual('', git(self.dest / name, 'status',
                                     '--porcelain', '--untracked-files=no'))
        # No tag is made; only os-traits gets a PKG-INFO (OsTraitsTest).
        for name in self.projects:
            self.assertEqual([self.projects[name].version],
                             git(self.dest / name, 'tag').split())
        for name in ('nova', 'cinder'):
            self.assertFalse((self.dest / name / 'PKG-INFO').exists())

    def test_second_stack_changes_nothing(self):
        self.assertEqual(0, self.stack('pre-install').returncode)
        heads = {name: git(self.dest / name, 'rev-parse', 'HEAD')
                 for name in self.projects}
        result = self.stack('pre-install')
        self.assertEqual(0, result.returncode, result.stderr)
        for name in self.projects:
            self.assertIn(f'{name}: the series is already applied',
                          result.stdout)
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


class OsTraitsTest(PluginTestCase):
    """os-traits alone, as on a node that runs neither Nova nor Cinder
    (placement's): it is in LIBS_FROM_GIT whatever the services, so its
    checkout is patched all the same.
    """

    CHECKOUTS = ('os-traits',)
    ENABLED_SERVICES = 'placement-api,tempest'

    def test_os_traits_installs_as_the_version_nova_requires(self):
        # pbr reads the checkout's PKG-INFO before git: the wheel pip
        # builds from it, as devstack's pip install does, has the version
        # Nova's series requires, not 3.9.1.dev1.
        traits = self.dest / 'os-traits'
        version = self.projects['os-traits'].installs_as
        self.assertEqual('3.9.0+multiattach.1', version)
        result = self.stack('pre-install')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn(f'os-traits: the patched tree installs as {version}',
                      result.stdout)
        wheels = self.dest / 'wheels'
        subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--quiet',
                        '--no-deps', '--wheel-dir', wheels, traits],
                       check=True, capture_output=True)
        self.assertEqual([f'os_traits-{version}-py3-none-any.whl'],
                         [path.name for path in wheels.iterdir()])

    def test_without_the_version_file_pbr_versions_from_git(self):
        # The control: the same checkout without the PKG-INFO.
        self.assertEqual(0, self.stack('pre-install').returncode)
        traits = self.dest / 'os-traits'
        (traits / 'PKG-INFO').unlink()
        wheels = self.dest / 'wheels'
        subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--quiet',
                        '--no-deps', '--wheel-dir', wheels, traits],
                       check=True, capture_output=True)
        [wheel] = [path.name for path in wheels.iterdir()]
        self.assertTrue(wheel.startswith('os_traits-3.9.1.dev'), wheel)

    def test_refuses_os_traits_on_another_base(self):
        traits = self.dest / 'os-traits'
        (traits / 'DEVSTACK_TEST').write_text('a commit after the release\n')
        git(traits, 'add', 'DEVSTACK_TEST')
        git(traits, 'commit', '-q', '-m', 'Something after 3.9.0')
        result = self.stack('pre-install')
        self.assertEqual(1, result.returncode)
        self.assertIn('not at os-traits 3.9.0', result.stderr)
        self.assertIn('OS_TRAITS_BRANCH=3.9.0', result.stderr)
        self.assertEqual([], self.applied('os-traits'))


class SettingsTest(unittest.TestCase):

    def settings(self, echo, **env):
        return subprocess.run(
            ['bash', '-c', 'function trueorfalse { echo False; }; '
             f'source {ROOT}/devstack/settings; echo {echo}'],
            text=True, capture_output=True, check=True,
            env=dict(os.environ, **env)).stdout.strip()

    def test_settings_enable_volume_multiattach(self):
        self.assertEqual('True', self.settings('$ENABLE_VOLUME_MULTIATTACH'))

    def test_settings_install_os_traits_from_git(self):
        for before, after in (('', 'os-traits'),
                              ('oslo.db', 'oslo.db,os-traits'),
                              ('os-traits,oslo.db', 'os-traits,oslo.db'),
                              ('ALL', 'ALL')):
            self.assertEqual(after, self.settings('$LIBS_FROM_GIT',
                                                  LIBS_FROM_GIT=before))


if __name__ == '__main__':
    unittest.main()
