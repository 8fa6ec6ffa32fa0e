"""The contract suite: what Nova relies on from a project, on the release
and on the patched tree.
"""

import json
from pathlib import Path
import shutil

from series import config
from series import pristine
from series import process
from series import queue
from series import suites
from series import virtualenvs


def contract(project):
    """Run contract/<project>/ on the pristine release and the patched tree.

    Every case must hold on the patched tree; on the release each case
    must behave as the suite records (HOLDS_ON_<version>), so that the
    evidence it prints stays true.
    """
    script = config.ROOT / 'contract' / project.name / 'nova_contract.py'
    if not script.exists():
        raise config.SeriesError(f'no contract suite for {project.name}')
    queue.ensure_tree(project)
    python = virtualenvs.ensure_venv(project)
    # A copy: running the suite writes byte code next to the sources.
    release = (config.ROOT / '.work' / 'contract' /
               f'{project.name}-{project.version}')
    shutil.rmtree(release, ignore_errors=True)
    shutil.copytree(pristine.unpack_pristine(project), release, symlinks=True)
    logs = config.ROOT / '.work' / 'logs'
    logs.mkdir(parents=True, exist_ok=True)
    runs = {}
    for label, tree in ((project.version, release),
                        ('patched', project.tree)):
        output = logs / f'{project.name}-contract-{label}.json'
        output.unlink(missing_ok=True)
        proc = process.run([python, script, '--json', output], cwd=tree,
                           env=dict(project.test_env, PYTHONPATH=str(tree)),
                           check=False)
        (logs / f'{project.name}-contract-{label}.log').write_text(
            proc.stdout)
        if not output.exists():
            process.say(proc.stdout)
            raise config.SeriesError(f'{project.name} contract suite did '
                                     f'not run on {label}')
        runs[label] = json.loads(output.read_text())
        imported = Path(runs[label][project.name]).resolve()
        if not imported.is_relative_to(tree.resolve()):
            raise config.SeriesError(f'the {label} run imported '
                                     f'{project.name} from {imported}, not '
                                     f'from {tree}')
    key = 'holds_on_' + project.version.replace('.', '_')
    expected = runs['patched'][key]
    release_outcomes = runs[project.version]['outcomes']
    rows, problems = compare_contract(
        expected, release_outcomes, runs['patched']['outcomes'],
        runs['patched']['docs'], project.version)
    width = max(len(row[0]) for row in rows)
    process.say(f'\n{"what Nova relies on":<{width}}  {project.version:>7}  '
                f'patched')
    for doc, on_release, on_patched in rows:
        process.say(f'{doc:<{width}}  {on_release:>7}  {on_patched:>7}')
    process.say(f'\nhow {project.version} fails:')
    for case in sorted(expected):
        outcome = release_outcomes.get(case)
        if outcome and not outcome['holds']:
            process.say(f'  {case}: {outcome["detail"]}')
    for problem in problems:
        process.say(f'PROBLEM: {problem}')
    return suites.SuiteResult(name=f'{project.name} contract suite',
                              passed=0 if problems else len(rows),
                              failed=len(problems), error='; '.join(problems))


def compare_contract(expected, on_release, on_patched, docs, version):
    """Table rows (behaviour, release, patched) and the problems found."""
    def shown(outcome):
        return 'holds' if outcome and outcome['holds'] else 'FAILS'

    rows, problems = [], []
    for case in sorted(expected):
        release, patched = on_release.get(case), on_patched.get(case)
        if not patched or not patched['holds']:
            problems.append(f'{case} does not hold on the patched tree: '
                            f'{patched["detail"] if patched else "not run"}')
        if not release or release['holds'] != expected[case]:
            problems.append(f'{case} on {version}: recorded as '
                            f'{"holding" if expected[case] else "failing"}'
                            f', {"not run" if not release else shown(release)}'
                            f' now')
        rows.append((docs[case], shown(release), shown(patched)))
    return rows, problems
