"""Tests of series.cloud.service_venv: the cloud's virtualenv, in a temporary
root, with pip and uv not run.
"""

from pathlib import Path
import shutil
from unittest import mock

from series.cloud import service_venv
from series.tests import base

PROJECTS_TOML = """\
[nova]
version = "34.0.0"
sha256 = "0"
constraints = "constraints/upper-constraints.txt"
series-requirements = ["os-traits"]

[os-traits]
version = "3.9.0"
sha256 = "0"
installs-as = "{installs_as}"
constraints = "constraints/upper-constraints.txt"

[cinder]
version = "29.0.0"
sha256 = "0"
constraints = "constraints/upper-constraints.txt"
"""


class VenvTest(base.RootTestCase):
    """The cloud's virtualenv: which patched trees, in which order, as
    which versions, and when it is rebuilt (pip itself is not run).
    """

    def setUp(self):
        super().setUp()
        self.write_projects('3.9.0+multiattach.1')
        (self.root / 'constraints').mkdir()
        (self.root / 'constraints/upper-constraints.txt').write_text(
            'cinder===28.0.0\nnova===33.0.0\noslo.db===18.1.0\n'
            'os-traits===3.9.0\n')
        for name in ('nova', 'os-traits', 'cinder'):
            tree = self.root / '.work/trees' / name
            (tree / '.git').mkdir(parents=True)
            (tree / 'requirements.txt').write_text(f'{name} needs\n')
        self.installed = []
        patchers = [mock.patch.object(service_venv.process, 'run',
                                      self.fake_run),
                    mock.patch.object(service_venv.process, 'say',
                                      lambda line: None),
                    mock.patch.object(service_venv.subprocess, 'Popen',
                                      self.fake_popen),
                    mock.patch.object(service_venv, 'link_ceph_modules',
                                      lambda path: None),
                    mock.patch.object(service_venv.virtualenvs, 'uv',
                                      lambda: Path('uv'))]
        for patcher in patchers:
            patcher.start()
            self.addCleanup(patcher.stop)

    def write_projects(self, installs_as):
        (self.root / 'projects.toml').write_text(
            PROJECTS_TOML.format(installs_as=installs_as))

    def fake_run(self, cmd, env=None, **kwargs):
        if cmd[:2] == ['rm', '-rf']:
            shutil.rmtree(cmd[2], ignore_errors=True)
        elif cmd[1:3] == ['-m', 'venv']:
            Path(cmd[3]).mkdir(parents=True)
        elif '-e' in cmd:
            self.installed.append(
                (Path(cmd[cmd.index('-e') + 1]).name, env['PBR_VERSION']))

    def fake_popen(self, cmd, **kwargs):
        self.installed.append(('releases', None))
        return mock.Mock(stdout=iter(()), wait=lambda: 0)

    def test_patched_trees_in_order_each_as_its_version(self):
        # os-traits before Nova, whose requirements ask for its version;
        # placement (one of the releases after) then finds it installed.
        service_venv.ensure()
        self.assertEqual([('os-traits', '3.9.0+multiattach.1'),
                          ('nova', '34.0.0'), ('cinder', '29.0.0'),
                          ('releases', None)],
                         self.installed)

    def test_constraints_drop_every_patched_project(self):
        self.assertEqual(['os-traits', 'nova', 'cinder'],
                         [p.name for p in service_venv.patched_projects()])
        service_venv.ensure()
        self.assertEqual('oslo.db===18.1.0\n',
                         (service_venv.path() /
                          'upper-constraints.txt').read_text())

    def test_rebuilt_when_the_installed_version_changes(self):
        service_venv.ensure()
        service_venv.ensure()
        self.assertEqual(4, len(self.installed))
        self.write_projects('3.9.0+multiattach.2')
        service_venv.ensure()
        self.assertEqual(('os-traits', '3.9.0+multiattach.2'),
                         self.installed[4])

    def test_rebuilt_when_a_requirements_file_changes(self):
        service_venv.ensure()
        (self.root / '.work/trees/os-traits/requirements.txt').write_text(
            'pbr\n')
        service_venv.ensure()
        self.assertEqual(8, len(self.installed))

    def test_missing_work_trees_are_applied(self):
        for name in ('os-traits', 'cinder'):
            shutil.rmtree(self.root / '.work/trees' / name / '.git')
        with mock.patch.object(service_venv.queue, 'apply') as apply:
            service_venv.patched_projects()
        self.assertEqual(['os-traits', 'cinder'],
                         [call.args[0].name for call in apply.call_args_list])
