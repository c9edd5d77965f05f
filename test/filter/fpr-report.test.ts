/**
 * The pieces of `npm run fpr-report` (scripts/fpr/*): its measurement agrees with theory within a
 * binomial tolerance and is deterministic; the chart writer emits well-formed SVG; the section
 * rewrite of docs/filters.md touches only its own section. Not a timing test.
 */
import { describe, expect, it } from 'vitest';
import { FILTER_POLICIES } from '../../bench/filter-policies.js';
import { renderLogChart, type LogChartSpec } from '../../scripts/fpr/chart.js';
import { formatRate, markdownTable, replaceSection } from '../../scripts/fpr/markdown.js';
import { measureFpr, type FprBudget } from '../../scripts/fpr/measure.js';
import { testSeed } from '../support/seed.js';
import { fprTolerance } from './policy-contract.js';

const FIXED_100K: FprBudget = { minTrials: 100_000, maxTrials: 100_000, targetFalsePositives: 1 };

describe('fpr-report measurement', () => {
  for (const policy of FILTER_POLICIES) {
    for (const { bitsPerKey, keysPerFilter, filters } of [
      { bitsPerKey: 4, keysPerFilter: 10_000, filters: 1 },
      { bitsPerKey: 10, keysPerFilter: 10_000, filters: 1 },
      { bitsPerKey: 8, keysPerFilter: 1_000, filters: 10 },
    ]) {
      it(`${policy.label}: measured rate at ${bitsPerKey} bits/key, ${filters} × ${keysPerFilter} keys, is within tolerance of theory`, () => {
        const seed = (testSeed() ^ Math.imul(bitsPerKey, 0x2545f491) ^ keysPerFilter) >>> 0;
        const pt = measureFpr(policy, bitsPerKey, { keysPerFilter, filters }, FIXED_100K, seed);
        expect(pt.trials).toBe(100_000);
        expect(pt.measured).toBe(pt.falsePositives / pt.trials);
        expect(pt.theory).toBeGreaterThan(0);
        expect(pt.theory).toBeLessThan(1);
        const tol = fprTolerance(pt.theory, pt.trials, 0.1);
        expect(Math.abs(pt.measured - pt.theory), `measured ${pt.measured} vs theory ${pt.theory}`).toBeLessThanOrEqual(tol);
        // Whatever the policy spends, it is near its budget at these sizes (headers are small).
        expect(pt.usedBitsPerKey).toBeGreaterThan(bitsPerKey * 0.9);
        expect(pt.usedBitsPerKey).toBeLessThan(bitsPerKey * 1.1);
      });
    }
  }

  it('is deterministic: the same seed gives the same point', () => {
    const policy = FILTER_POLICIES[0]!;
    const scope = { keysPerFilter: 500, filters: 3 };
    const a = measureFpr(policy, 6, scope, FIXED_100K, testSeed());
    const b = measureFpr(policy, 6, scope, FIXED_100K, testSeed());
    expect(b).toEqual(a);
  });

  it('stops by its budget: never before minTrials, then at the target count or the cap', () => {
    const policy = FILTER_POLICIES[0]!;
    const scope = { keysPerFilter: 1_000, filters: 3 };
    // A high rate (2 bits/key): the target of 50 is met at the first check after minTrials.
    const early = measureFpr(policy, 2, scope, { minTrials: 20_000, maxTrials: 1e9, targetFalsePositives: 50 }, 1);
    expect(early.trials).toBeGreaterThanOrEqual(20_000);
    expect(early.trials).toBeLessThan(40_000);
    expect(early.trials % scope.filters).toBe(0);
    // An unreachable target: the cap decides.
    const capped = measureFpr(policy, 20, scope, { minTrials: 1, maxTrials: 30_000, targetFalsePositives: 1e9 }, 1);
    expect(capped.trials).toBeGreaterThanOrEqual(30_000);
    expect(capped.trials).toBeLessThan(45_000);
  });

  it('rejects an empty scope', () => {
    expect(() => measureFpr(FILTER_POLICIES[0]!, 10, { keysPerFilter: 0, filters: 1 }, FIXED_100K, 1)).toThrow(RangeError);
  });
});

/** Crude XML checks: every tag closes in order, attributes hold no NaN/Infinity, ids resolve. */
function checkWellFormedSvg(svg: string): void {
  expect(svg.startsWith('<?xml')).toBe(true);
  expect(svg).toMatch(/<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+(\.\d+)?" height="\d+(\.\d+)?"/);
  const body = svg.replace(/<\?xml[^>]*\?>/, '');
  const stack: string[] = [];
  const tag = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(\/?)>/g;
  let consumed = 0;
  for (let m = tag.exec(body); m !== null; m = tag.exec(body)) {
    // Between tags only text: no stray '<' or '>' that the pattern did not understand.
    expect(body.slice(consumed, m.index)).not.toMatch(/[<>]/);
    consumed = m.index + m[0].length;
    const [, closing, name, attrs, selfClosing] = m;
    for (const a of attrs!.matchAll(/([\w:-]+)="([^"]*)"/g)) {
      expect(a[2], `attribute ${a[1]} of <${name}>`).not.toMatch(/NaN|Infinity|undefined/);
      for (const n of a[2]!.match(/-?\d+(\.\d+)?(e-?\d+)?/g) ?? []) expect(Number.isFinite(Number(n))).toBe(true);
    }
    if (closing) expect(stack.pop(), `closing </${name}>`).toBe(name);
    else if (!selfClosing) stack.push(name!);
  }
  expect(body.slice(consumed).trim()).toBe('');
  expect(stack).toEqual([]);
  for (const ref of svg.matchAll(/url\(#([^)]+)\)/g)) expect(svg).toContain(`id="${ref[1]}"`);
}

describe('fpr-report chart', () => {
  const spec: LogChartSpec = {
    title: 'Rates & <bounds>',
    subtitle: 'a "quoted" subtitle',
    xLabel: 'bits per key',
    yLabel: 'rate',
    xMin: 2,
    xMax: 20,
    xLabelStep: 2,
    yMinExp: -7,
    yMaxExp: 0,
    panels: [0, 1].map((p) => ({
      title: `panel ${p}`,
      series: [
        { color: '#666', dash: '6 4', line: [2, 10, 20].map((x) => ({ x, y: 2 ** -x })) },
        {
          color: '#0072B2',
          line: [2, 10, 20].map((x) => ({ x, y: 0.6 ** x })),
          markers: [
            { x: 2, y: 0.4, shape: 'circle' as const },
            { x: 20, y: 1e-7, shape: 'below' as const },
            { x: 12, y: 0, shape: 'circle' as const }, // not drawable on a log axis: skipped
          ],
        },
      ],
    })),
    legend: [
      { label: 'Bloom', kind: 'swatch', color: '#0072B2' },
      { label: 'limit 2^{−b} for any filter', kind: 'dashed', color: '#666' },
      { label: 'below', kind: 'below', color: '#444' },
    ],
    footnote: 'made by a test',
  };

  it('emits well-formed SVG with escaped text and every panel, tick and legend entry', () => {
    const svg = renderLogChart(spec);
    checkWellFormedSvg(svg);
    expect(svg).toContain('Rates &amp; &lt;bounds&gt;');
    expect(svg).toContain('a &quot;quoted&quot; subtitle');
    expect(svg.match(/<polyline /g)).toHaveLength(4);
    expect(svg.match(/<circle /g)).toHaveLength(2); // one per panel (the y = 0 marker is skipped)
    expect(svg.match(/clipPath id=/g)).toHaveLength(2);
    for (const label of ['panel 0', 'panel 1', 'bits per key', 'made by a test', '20']) expect(svg).toContain(`>${label}<`);
    // Superscripts are tspans, and the text after one goes back to the baseline.
    expect(svg).toMatch(/limit 2<tspan dy="-\d+" font-size="\d+">−b<\/tspan> <tspan dy="\d+">for any filter<\/tspan>/);
  });

  it('is a pure function of the spec', () => {
    expect(renderLogChart(spec)).toBe(renderLogChart(spec));
  });

  it('rejects an empty axis range', () => {
    expect(() => renderLogChart({ ...spec, xMax: 2 })).toThrow(RangeError);
  });
});

describe('fpr-report markdown', () => {
  const doc = [
    '# Filters',
    '',
    'Intro.',
    '',
    '## False-positive rates',
    '',
    'old text',
    '### an old subsection',
    '```sh',
    '# a shell comment, not a heading',
    '```',
    'more old text',
    '',
    '## Later section',
    '',
    'kept',
    '',
  ].join('\n');

  it('replaces only its section, up to the next heading of the same level', () => {
    const out = replaceSection(doc, 'False-positive rates', 'new body\n');
    expect(out).toBe(
      ['# Filters', '', 'Intro.', '', '## False-positive rates', '', 'new body', '', '## Later section', '', 'kept', ''].join('\n'),
    );
    expect(replaceSection(out, 'False-positive rates', 'new body\n')).toBe(out);
  });

  it('replaces a last section through the end of the document', () => {
    const last = '# T\n\n## False-positive rates\n\n(Filled later.)\n';
    expect(replaceSection(last, 'False-positive rates', 'table')).toBe('# T\n\n## False-positive rates\n\ntable\n');
  });

  it('appends the section when the heading is missing, or makes a document of it', () => {
    expect(replaceSection('# T\n\ntext\n', 'False-positive rates', 'table')).toBe('# T\n\ntext\n\n## False-positive rates\n\ntable\n');
    expect(replaceSection('', 'False-positive rates', 'table')).toBe('## False-positive rates\n\ntable\n');
  });

  it('formats rates as percentages with three significant digits', () => {
    for (const p of [0.393, 0.0819, 0.00844, 0.000954, 9.54e-7, 1, 0.5]) {
      const s = formatRate(p);
      expect(s).toMatch(/^\d+(\.\d+)?%$/);
      const back = Number(s.slice(0, -1)) / 100;
      expect(Math.abs(back - p) / p).toBeLessThan(0.005);
      expect(s.replace(/[.%]/g, '').replace(/^0+/, '').length).toBeLessThanOrEqual(3);
    }
    expect(formatRate(0)).toBe('0');
  });

  it('builds tables with one row per line and escaped pipes', () => {
    const t = markdownTable(['a', 'b|c'], [['1', '2']]).split('\n');
    expect(t).toEqual(['| a | b\\|c |', '|---:|---:|', '| 1 | 2 |']);
  });
});
