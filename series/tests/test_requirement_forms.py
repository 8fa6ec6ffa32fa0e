from pathlib import Path
import shutil
import tempfile
import unittest
from unittest import mock

from series import config
from series import requirement_forms

PATCH = '''From 0000000000000000000000000000000000000000 Mon Sep 17 2001
Subject: [PATCH] scheduler: Require the trait

---
diff --git a/nova/x.py b/nova/x.py
--- a/nova/x.py
+++ b/nova/x.py
@@ -1 +1 @@
-a
+os-traits==3.9.0+multiattach.1
diff --git a/requirements.txt b/requirements.txt
--- a/requirements.txt
+++ b/requirements.txt
@@ -1,3 +1,3 @@
 os-resource-classes>=1.1.0 # Apache-2.0
-os-traits>=3.8.0 # Apache-2.0
+{line} # Apache-2.0
 os-vif>=3.1.0 # Apache-2.0
'''
HERE = 'os-traits==3.9.0+multiattach.1'
UPSTREAM = 'os-traits>=3.10.0'


class RequirementFormsTest(unittest.TestCase):

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.root)
        patcher = mock.patch.object(config, 'ROOT', self.root)
        patcher.start()
        self.addCleanup(patcher.stop)
        (self.root / 'projects.toml').write_text(f'''
[nova]
version = "34.0.0"
sha256 = "0"
upstream-requirements = {{ "os-traits" = "{UPSTREAM}" }}

[os-traits]
version = "3.9.0"
sha256 = "0"
installs-as = "3.9.0+multiattach.1"
''')
        self.projects = config.load_projects()
        self.nova = self.projects['nova']
        self.nova.patches.mkdir(parents=True)

    def write_series(self, *lines):
        names = []
        for number, line in enumerate(lines, 1):
            name = f'000{number}-x.patch'
            (self.nova.patches / name).write_text(PATCH.format(line=line))
            names.append(name)
        (self.nova.patches / 'series').write_text(
            '# the series\n' + ''.join(f'{n}\n' for n in names))

    def test_the_form_here_once_is_clean(self):
        self.write_series(HERE)
        self.assertEqual([], requirement_forms.problems(self.nova,
                                                        self.projects))

    def test_the_upstream_form_in_the_patches_is_refused(self):
        self.write_series(UPSTREAM)
        problems = requirement_forms.problems(self.nova, self.projects)
        self.assertEqual(1, len(problems))
        self.assertIn(f"it adds ['{UPSTREAM}']", problems[0])

    def test_the_line_twice_or_never_is_refused(self):
        self.write_series(HERE, HERE)
        self.assertEqual(1, len(requirement_forms.problems(self.nova,
                                                           self.projects)))
        self.write_series('os-vif>=3.2.0')
        self.assertIn('it adds []', requirement_forms.problems(
            self.nova, self.projects)[0])

    def test_only_requirements_txt_counts(self):
        # The same text added to nova/x.py is not a requirement line.
        self.assertEqual([HERE], requirement_forms.added_lines(
            PATCH.format(line=HERE), 'os_traits'))

    def test_export_upstream_rewrites_only_the_requirement_line(self):
        self.write_series(HERE)
        out = self.root / 'upstream'
        names = requirement_forms.export_upstream(self.nova, out)
        written = (out / names[0]).read_text()
        self.assertEqual(PATCH.format(line=UPSTREAM).replace(
            f'+{UPSTREAM}\ndiff', f'+{HERE}\ndiff'), written)
        self.assertEqual((self.nova.patches / 'series').read_text(),
                         (out / 'series').read_text())

    def test_export_upstream_refuses_a_series_not_in_the_form_here(self):
        self.write_series(UPSTREAM)
        with self.assertRaises(config.SeriesError):
            requirement_forms.export_upstream(self.nova, self.root / 'out')
        self.assertFalse((self.root / 'out').exists())


class RepositoryTest(unittest.TestCase):

    def test_nova_requires_the_patched_os_traits_exactly(self):
        projects = config.load_projects()
        self.assertEqual([('os-traits', 'os-traits==3.9.0+multiattach.1',
                           'os-traits>=3.10.0')],
                         requirement_forms.forms(projects['nova'], projects))
        self.assertEqual([], requirement_forms.problems(projects['nova'],
                                                        projects))

    def test_the_client_requires_the_patched_sdk_exactly(self):
        projects = config.load_projects()
        client = projects['python-openstackclient']
        self.assertEqual([('openstacksdk',
                           'openstacksdk==4.22.0+multiattach.1',
                           'openstacksdk>=4.23.0')],
                         requirement_forms.forms(client, projects))
        self.assertEqual([], requirement_forms.problems(client, projects))
