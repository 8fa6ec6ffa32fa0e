"""Record the section titles of the nova-specs template.

Reads a release template from a nova-specs git directory at a commit,
parses it exactly as nova-specs' tests/test_titles.py does
(docutils.core.publish_doctree, then the dict of each section title with
the titles of its subsections) and writes specs/template-titles.json,
which test_titles.py checks the specs against.

Run from the repository root:

    .work/venvs/nova/bin/python -m specs.tests.record_template_titles \\
        --repo /path/to/nova-specs/.git \\
        --commit 23297f93da97a7011eb7a19399c144f7ee45ccc6
"""

import argparse
import json
import subprocess
import sys

from specs.tests import test_titles


def record(repo, commit, template):
    commit = subprocess.run(
        ['git', '-C', repo, 'rev-parse', '--verify', commit + '^{commit}'],
        check=True, capture_output=True, text=True).stdout.strip()
    text = subprocess.run(
        ['git', '-C', repo, 'show', '%s:%s' % (commit, template)],
        check=True, capture_output=True, text=True).stdout
    return {
        'repository': 'openstack/nova-specs',
        'commit': commit,
        'template': template,
        'titles': test_titles.get_titles(test_titles.parse(text)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--repo', required=True,
                        help='git directory of openstack/nova-specs')
    parser.add_argument('--commit', default='HEAD')
    parser.add_argument('--template', default='specs/%s-template.rst'
                        % test_titles.RELEASE)
    parser.add_argument('--output', default=test_titles.TITLES_FILE)
    parser.add_argument('--check', action='store_true',
                        help='compare with the recorded file (at its '
                        'commit) instead of writing it')
    args = parser.parse_args()
    if args.check:
        on_file = test_titles.load_recorded_titles()
        again = record(args.repo, on_file['commit'], on_file['template'])
        same = list(again['titles'].items()) == list(
            on_file['titles'].items())
        print('%s: %s the template at %s' % (
            args.output, 'matches' if same else 'DIFFERS from',
            on_file['commit']))
        return 0 if same else 1
    recorded = record(args.repo, args.commit, args.template)
    with open(args.output, 'w', encoding='utf-8') as f:
        json.dump(recorded, f, indent=4)
        f.write('\n')
    print('%s: %d sections from %s at %s' % (
        args.output, len(recorded['titles']), args.template,
        recorded['commit']))


if __name__ == '__main__':
    sys.exit(main())
