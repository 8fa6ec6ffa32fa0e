"""The two forms of the requirement lines a series adds.

The patches here require each patched project another series needs at the
version its tree installs as (projects.toml `installs-as`: a local
version, which no package index publishes, so no upstream release can
satisfy it in the patched tree's place). Upstream, the same line asks for
the release the change is proposed for (`upstream-requirements`).
`tools/series check` proves the patches carry the first form, and
`tools/series export --upstream DIR` writes the series in the second.
"""

import re

from series import config
from series import queue

DIFF = re.compile(r'^diff --git a/(\S+) b/', re.M)
NAME = re.compile(r'^[A-Za-z0-9._-]+')


def canonical(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def forms(project, projects):
    """[(requirement name, the line here, the line upstream)]."""
    return [(name, f'{name}=={projects[name].installs_as}', upstream)
            for name, upstream in project.upstream_requirements.items()]


def added_lines(patch_text, name):
    """The requirement lines naming `name` that a format-patch file adds
    to requirements.txt, without their comments.
    """
    lines = []
    parts = DIFF.split(patch_text)
    for path, diff in zip(parts[1::2], parts[2::2]):
        if path != 'requirements.txt':
            continue
        for line in diff.splitlines():
            if not line.startswith('+') or line.startswith('+++'):
                continue
            requirement = line[1:].split('#', 1)[0].strip()
            found = NAME.match(requirement)
            if found and canonical(found.group(0)) == canonical(name):
                lines.append(requirement)
    return lines


def problems(project, projects):
    """Each requirement line of `forms()` must be added once, in the form
    here; a problem for each that is not.
    """
    texts = [(project.patches / name).read_text(errors='replace')
             for name in queue.read_series(project)]
    found = []
    for name, here, upstream in forms(project, projects):
        added = [line for text in texts for line in added_lines(text, name)]
        if added != [here]:
            found.append(f'requirements.txt: the series must add {here!r} '
                         f'once (upstream form {upstream!r}, written by '
                         f'export --upstream); it adds {added}')
    return found


def upstream_text(patch_text, project, projects):
    """A format-patch file with each requirement line here in its upstream
    form.
    """
    parts = DIFF.split(patch_text)
    text = parts[0]
    for path, diff in zip(parts[1::2], parts[2::2]):
        if path == 'requirements.txt':
            for _name, here, upstream in forms(project, projects):
                diff = re.sub(rf'^\+{re.escape(here)}(?=\s|$)',
                              f'+{upstream}', diff, flags=re.M)
        text += f'diff --git a/{path} b/{diff}'
    return text


def export_upstream(project, destination):
    """Write the series of patches/<project> to `destination` in its
    upstream form: the series file and each patch.
    """
    projects = config.load_projects()
    found = problems(project, projects)
    if found:
        raise config.SeriesError('; '.join(found))
    destination.mkdir(parents=True, exist_ok=True)
    (destination / 'series').write_text(
        (project.patches / 'series').read_text())
    names = queue.read_series(project)
    texts = [upstream_text((project.patches / name).read_text(), project,
                           projects) for name in names]
    for name, here, upstream in forms(project, projects):
        added = [line for text in texts for line in added_lines(text, name)]
        if added != [upstream]:
            raise config.SeriesError(f'the upstream form adds {added}, not '
                                     f'{upstream!r} once')
    for name, text in zip(names, texts):
        (destination / name).write_text(text)
    return names
