import { describe, expect, it } from 'vitest';
import { diffLines, normalise, parsePage, rewrite, substitutePorts, type Outcome } from '../../../scripts/docs/walkthrough.ts';
import { fillSections, numberIn, sectionNames, statedCounts } from '../../../scripts/docs/generated.ts';

/** The documentation runner's own rules, on small pages (test/docs runs the real ones). */
const PAGE = [
  'Intro.',
  '```console',
  '$ curl -s http://127.0.0.1:3000/a \\',
  '    -H "X-Auth-Token: $TOKEN"',
  '{"id":1,"created_at":"2026-11-22T04:58:33.047Z"}',
  '$ export X=1',
  '$ echo "$X"',
  '1',
  '```',
  '```sh',
  '$ not run',
  '```',
].join('\n');

describe('parsePage', () => {
  it('splits console blocks into commands (with continuation lines) and their output lines', () => {
    const examples = parsePage('p.md', PAGE);
    expect(examples.map((example) => [example.line, example.command, example.expected])).toEqual([
      [3, 'curl -s http://127.0.0.1:3000/a \\\n    -H "X-Auth-Token: $TOKEN"', ['{"id":1,"created_at":"2026-11-22T04:58:33.047Z"}']],
      [6, 'export X=1', []],
      [7, 'echo "$X"', ['1']],
    ]);
    expect(examples[0]!.outputStart).toBe(4);
  });

  it('refuses a console block whose first line is not a command, and an unclosed block', () => {
    expect(() => parsePage('p.md', '```console\noutput\n```')).toThrow('p.md:2: a console block must start with a "$ " command line');
    expect(() => parsePage('p.md', '```console\n$ echo')).toThrow('p.md:1: a code block is not closed');
  });
});

describe('normalise', () => {
  it('replaces what differs on every run, and nothing else', () => {
    const text = [
      'X-Request-Id: 56b11c9d-fbea-4bdc-b2eb-beef30fd722c',
      'X-Runtime: 0.625266',
      'ETag: W/"652e6350c1d8e4b89a19590903dc7a02"',
      'Date: Sun, 22 Nov 2026 23:05:36 GMT',
      '{"codes":["WIN-GC37UQ93"],"id":8,"at":"2026-11-22T04:58:33.639Z","site":"S-0042","code":"WIN-NOTISSUED"}',
      'Created key_acf8ffed46ba92dc: tg_I00U-jchBMTWDAruA6zDhjBQ9nBEZI71hL-vYfikv0o',
      'Code WIN-GC37UQ93 expired on 26 November 2026 01:30:12 UTC; valid from 1 December 2026 10:00 UTC, not 2026 10:00 UTC',
    ].join('\n');
    expect(normalise(text).text).toBe(
      [
        'X-Request-Id: <uuid>',
        'X-Runtime: <seconds>',
        'ETag: W/"<etag>"',
        'Date: <date>',
        '{"codes":["<code>"],"id":8,"at":"<time>","site":"S-0042","code":"WIN-NOTISSUED"}',
        'Created <key-id>: <token>',
        'Code <code> expired on <moment>; valid from <moment>, not 2026 10:00 UTC',
      ].join('\n'),
    );
  });
});

describe('normalise, a smoke check that polls', () => {
  it('compares the line whatever the number of tries, one (no note) included', () => {
    const shown = 'ok   200  getIssuanceJob         GET /v1.0/issuance_jobs/7 (2 tries)                        14 ms';
    const once = 'ok   200  getIssuanceJob         GET /v1.0/issuance_jobs/7                                  9 ms';
    const six = 'ok   200  getIssuanceJob         GET /v1.0/issuance_jobs/7 (6 tries)                       140 ms';
    expect(normalise(once).text).toBe(normalise(shown).text);
    expect(normalise(six).text).toBe(normalise(shown).text);
    expect(normalise('GET /v1.0/exports/5 (lower case, 3 tries) 1 ms').text).toBe('GET /v1.0/exports/5 (lower case) <n> ms');
  });
});

describe('substitutePorts', () => {
  const shown = { core: 3000, pos: 3001, dynamodb: 8000, s3: 4568 };

  it('maps every shown port to the stack port and back, in one pass, when a free port is a shown one', () => {
    // The stack's free core port was 3001 and its database's 3000: replaced one after the other,
    // 3000 would become 3001 and then the pos port (a failure CI met once).
    const stack = { core: 3001, pos: 40123, dynamodb: 3000, s3: 40124 };
    const command = 'smoke --core-url http://127.0.0.1:3000 --pos-url http://127.0.0.1:3001 --db localhost:8000 :30001';
    const run = substitutePorts(command, shown, stack);
    expect(run).toBe('smoke --core-url http://127.0.0.1:3001 --pos-url http://127.0.0.1:40123 --db localhost:3000 :30001');
    expect(substitutePorts(run, stack, shown)).toBe(command);
  });

  it('leaves other hosts and longer port numbers alone', () => {
    expect(substitutePorts('http://example.com:3000 127.0.0.1:30000', shown, { core: 1, pos: 2, dynamodb: 3, s3: 4 })).toBe(
      'http://example.com:3000 127.0.0.1:30000',
    );
  });
});

describe('diffLines', () => {
  it('shows the page line before the run line that replaces it', () => {
    expect(diffLines(['a', 'b', 'c'], ['a', 'B', 'c', 'd'])).toEqual(['  a', '- b', '+ B', '  c', '+ d']);
  });
});

describe('rewrite (update mode)', () => {
  it('writes the run into differing examples only, keeping the page spelling of lines and values it already shows', () => {
    const page = ['```console', '$ first', 'at 2026-01-01T00:00:00.000Z', '$ second', 'old at 2026-01-01T00:00:00.000Z', 'Date: then', '```'].join('\n');
    const [first, second] = parsePage('p.md', page);
    const outcomes: Outcome[] = [
      { example: first!, index: 0, actual: ['at 2026-11-22T10:00:00.000Z'], status: 0, matches: true },
      { example: second!, index: 1, actual: ['new at 2026-11-22T10:00:00.000Z', 'Date: now', 'added'], status: 0, matches: false },
    ];
    expect(rewrite(page, outcomes).split('\n')).toEqual([
      '```console',
      '$ first',
      'at 2026-01-01T00:00:00.000Z',
      '$ second',
      'new at 2026-01-01T00:00:00.000Z',
      'Date: then',
      'added',
      '```',
    ]);
  });
});

describe('generated sections and counted claims', () => {
  it('rewrites what is between markers, but not an example of markers inside a code block', () => {
    const page = [
      '<!-- generated:routes -->',
      'stale',
      '<!-- /generated:routes -->',
      '```markdown',
      '<!-- generated:routes -->',
      'example',
      '<!-- /generated:routes -->',
      '```',
    ].join('\n');
    expect(sectionNames('p.md', page)).toEqual(['routes']);
    expect(fillSections('p.md', page, { routes: 'fresh' }).split('\n').slice(0, 7)).toEqual([
      '<!-- generated:routes -->',
      'fresh',
      '<!-- /generated:routes -->',
      '```markdown',
      '<!-- generated:routes -->',
      'example',
      '<!-- /generated:routes -->',
    ]);
    expect(() => fillSections('p.md', '<!-- generated:nope -->\n<!-- /generated:nope -->', {})).toThrow('unknown generated section "nope"');
  });

  it('reads counts in digits and in words, and only counts', () => {
    expect([numberIn('38'), numberIn('seven'), numberIn('thirty-eight'), numberIn('its')]).toEqual([38, 7, 38, undefined]);
    expect(statedCounts('has 38 alarms; the seven DynamoDB tables; its alarms; more alarms').map((claim) => [claim.what, claim.stated])).toEqual([
      ['alarms', 38],
      ['tables', 7],
    ]);
  });
});
