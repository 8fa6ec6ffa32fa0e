"""The scenario's transcript, the outcome of each step and the report."""

import dataclasses
import json
import textwrap

from demo_constants import MICROVERSION


@dataclasses.dataclass
class Outcome:
    step: str
    expected: str
    observed: str
    ok: bool


class Transcript:
    """Prints the scenario and keeps it as Markdown."""

    def __init__(self):
        self.markdown = []

    def heading(self, text):
        print(f'\n== {text}\n', flush=True)
        self.markdown.append(f'\n## {text}\n')

    def text(self, text):
        print(text, flush=True)
        self.markdown.append(f'\n{text}\n')

    def block(self, lines, lang=''):
        print('\n'.join('    ' + line for line in lines) + '\n', flush=True)
        self.markdown.append('\n```' + lang + '\n' + '\n'.join(lines) +
                             '\n```\n')


def without_links(body):
    if isinstance(body, dict):
        return {key: without_links(value) for key, value in body.items()
                if key != 'links'}
    if isinstance(body, list):
        return [without_links(item) for item in body]
    return body


def pretty(body):
    return json.dumps(without_links(body), indent=2).splitlines()


class Report:
    """The outcome of each step, and the table that ends the run."""

    def __init__(self, transcript_path):
        self.transcript_path = transcript_path
        self.transcript = Transcript()
        self.outcomes = []
        self.printed = False

    @property
    def ok(self):
        return bool(self.outcomes) and all(o.ok for o in self.outcomes)

    def expect(self, step, expected, observed, ok):
        self.outcomes.append(Outcome(step, expected, observed, bool(ok)))
        mark = 'ok' if ok else 'FAILED'
        self.transcript.text(f'[{mark}] {step}: expected {expected}; '
                             f'observed {observed}')

    def expect_status(self, step, expected_code, code, body, mentions=None):
        message = ''
        if isinstance(body, dict) and len(body) == 1:
            fault = next(iter(body.values()))
            if isinstance(fault, dict):
                message = fault.get('message', '')
        ok = code == expected_code and (mentions is None or
                                        mentions in message)
        observed = f'{code}' + (f' "{message}"' if message else '')
        expected = f'{expected_code}' + (
            f' naming "{mentions}"' if mentions else '')
        self.expect(step, expected, observed, ok)

    def write_transcript(self, endpoint):
        """Write the transcript, with the summary table, as Markdown."""
        path = self.transcript_path
        path.parent.mkdir(parents=True, exist_ok=True)
        table = ['', '## Summary', '',
                 '| step | expected | observed | |', '|---|---|---|---|']
        table += [f'| {o.step} | {o.expected} | {o.observed} | '
                  f'{"ok" if o.ok else "**FAILED**"} |'
                  for o in self.outcomes]
        path.write_text(
            '# volume-multiattach-enhancements: the scenario\n\n'
            f'Nova 34.0.0 with the series, microversion {MICROVERSION}, '
            f'API at {endpoint}.\n' +
            ''.join(self.transcript.markdown) + '\n'.join(table) + '\n')

    def print_summary(self):
        rows = [('step', 'expected', 'observed', '')] + [
            (o.step, o.expected, o.observed, 'ok' if o.ok else 'FAILED')
            for o in self.outcomes]
        widths = [min(max(len(row[i]) for row in rows), limit)
                  for i, limit in enumerate((44, 44, 56))]
        print()
        for row in rows:
            # A long cell wraps onto further lines of its own column.
            cells = [textwrap.wrap(cell, width) or ['']
                     for cell, width in zip(row, widths)]
            for number in range(max(len(lines) for lines in cells)):
                line = '  '.join(
                    (lines[number] if number < len(lines) else '').ljust(
                        width) for lines, width in zip(cells, widths))
                print((line + ('  ' + row[3] if number == 0 else ''))
                      .rstrip())
        failed = [o for o in self.outcomes if not o.ok]
        print(f'\ntranscript: {self.transcript_path}  (Nova\'s log: '
              f'{self.transcript_path.with_name("nova.log")})')
        print(f'{len(self.outcomes) - len(failed)} steps as stated, '
              f'{len(failed)} not' +
              ('' if failed else ': the feature works end to end'),
              flush=True)
        self.printed = True
