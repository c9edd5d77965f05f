/**
 * bench/chart: draws docs/bench.svg from a bench/db results file (`node dist/bench/db.js
 * --json=PATH`), so the chart is generated from measured figures, never drawn by hand:
 *
 *   npm run build && node dist/bench/chart.js results.json docs/bench.svg
 *
 * Operations per second per workload and column, grouped bars on a logarithmic axis (the
 * workloads span three orders of magnitude, and on a log axis equal gaps are equal ratios, the
 * figure the project's goals are stated in); sievekv's columns in strong colours, the peers
 * muted. Beside each workload, sievekv ÷ LevelDB for each sievekv column. Below, issue 10's
 * other figures (disk after overwrite, peak RSS, close, reopen) on linear axes, one per figure.
 *
 * Hand-written SVG, no dependency: `renderChart` is a pure function of the results.
 */
import { writeFileSync } from 'node:fs';
import { fmtRate } from './db/report.js';
import { cellOf, LEVELDB, opsPerSecond, readResults, SIEVEKV, type BenchResults, type ColumnInfo } from './db/results.js';

const WIDTH = 980;
const LABEL_WIDTH = 220; // workload name and ratios, left of the bars
const VALUE_ROOM = 64; // value labels right of the longest bar
const PLOT_LEFT = LABEL_WIDTH;
const PLOT_WIDTH = WIDTH - LABEL_WIDTH - VALUE_ROOM - 16;
const BAR = 10;
const BAR_GAP = 2;
const GROUP_PAD = 8;
const FONT = "'DejaVu Sans', Arial, Helvetica, sans-serif";
const GOOD = '#2b8a3e';
const BAD = '#c92a2a';

/** Strong for sievekv (async darker, sync lighter); one muted hue per peer engine. */
const PALETTE: Record<string, readonly [async: string, sync: string]> = {
  [SIEVEKV]: ['#d9480f', '#f59f00'],
  [LEVELDB]: ['#5b7bb4', '#9fb3d8'],
  rocksdb: ['#6f9e78', '#a9c9ae'],
  lmdb: ['#9c7fb3', '#c7b4d6'],
  sqlite: ['#9a9a9a', '#c4c4c4'],
};

/** sievekv's columns with options other than the defaults (they read another column's database). */
const SIEVEKV_VARIANT = '#a61e4d';

function colourOf(c: ColumnInfo): string {
  if (c.engine === SIEVEKV && c.readsFrom !== undefined) return SIEVEKV_VARIANT;
  const [asyncColour, syncColour] = PALETTE[c.engine] ?? ['#8c8c8c', '#bdbdbd'];
  return c.style === 'async' ? asyncColour : syncColour;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function text(x: number, y: number, s: string, attrs = ''): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}"${attrs ? ` ${attrs}` : ''}>${esc(s)}</text>`;
}

/** "1k", "10k", "1M" for a power of ten (or 2× and 5× of one). */
function shortNumber(x: number): string {
  if (x >= 1e6) return `${x / 1e6}M`;
  if (x >= 1e3) return `${x / 1e3}k`;
  return String(x);
}

/** One bar of a group: its column, value and label. */
interface Bar {
  readonly column: ColumnInfo;
  readonly value: number;
  readonly label: string;
}

/** A group of bars with the lines of text left of it (first line bold). */
interface Group {
  readonly title: string;
  readonly notes: readonly { text: string; colour?: string }[];
  readonly bars: readonly Bar[];
}

/**
 * Draws groups from `top`, bars from PLOT_LEFT with length `scale(value)`. Returns the stripes
 * behind alternate groups (`under`, to go beneath any grid) apart from the labels and bars
 * (`over`), and the y below the last group.
 */
function drawGroups(groups: readonly Group[], top: number, scale: (v: number) => number): { under: string[]; over: string[]; bottom: number } {
  const under: string[] = [];
  const svg: string[] = [];
  let y = top;
  groups.forEach((g, gi) => {
    const height = Math.max(g.bars.length * (BAR + BAR_GAP) - BAR_GAP, 14 * (1 + g.notes.length)) + 2 * GROUP_PAD;
    if (gi % 2 === 0) under.push(`<rect x="8" y="${y}" width="${WIDTH - 16}" height="${height}" fill="#f4f5f7"/>`);
    svg.push(text(16, y + GROUP_PAD + 10, g.title, 'font-weight="bold" font-size="12"'));
    g.notes.forEach((n, i) => svg.push(text(16, y + GROUP_PAD + 24 + 13 * i, n.text, `font-size="10"${n.colour ? ` fill="${n.colour}"` : ' fill="#555"'}`)));
    g.bars.forEach((b, i) => {
      const by = y + GROUP_PAD + i * (BAR + BAR_GAP);
      const w = Math.max(1, scale(b.value));
      const strong = b.column.engine === SIEVEKV;
      svg.push(`<rect x="${PLOT_LEFT}" y="${by}" width="${w.toFixed(1)}" height="${BAR}" fill="${colourOf(b.column)}"${strong ? ' stroke="#7a2800" stroke-width="0.6"' : ''}><title>${esc(`${b.column.label}: ${b.label}`)}</title></rect>`);
      svg.push(text(PLOT_LEFT + w + 4, by + BAR - 1.5, b.label, `font-size="9"${strong ? ' font-weight="bold" fill="#7a2800"' : ' fill="#444"'}`));
    });
    y += height;
  });
  return { under, over: svg, bottom: y };
}

/** sievekv ÷ LevelDB for each sievekv column: against LevelDB's column of the same style if it ran the workload, else its async one. */
function ratioNotes(r: BenchResults, workload: string): Group['notes'] {
  const notes: { text: string; colour?: string }[] = [];
  const leveldb = r.columns.filter((c) => c.engine === LEVELDB);
  for (const s of r.columns.filter((c) => c.engine === SIEVEKV)) {
    const mine = cellOf(r, workload, s.label);
    const same = leveldb.find((c) => c.style === s.style && cellOf(r, workload, c.label) !== undefined);
    const peer = same ?? leveldb.find((c) => c.readsFrom === undefined);
    const theirs = peer === undefined ? undefined : cellOf(r, workload, peer.label);
    if (mine === undefined || theirs === undefined) continue;
    const x = opsPerSecond(mine) / opsPerSecond(theirs);
    notes.push({ text: `${s.label} ÷ ${peer!.label}: ${x.toFixed(2)}×`, colour: x >= 1 ? GOOD : BAD });
  }
  return notes;
}

export function renderChart(r: BenchResults): string {
  const speedGroups: Group[] = r.workloads
    .map((w) => ({
      title: w.name,
      notes: ratioNotes(r, w.name),
      bars: r.columns.flatMap((c) => {
        const cell = cellOf(r, w.name, c.label);
        return cell === undefined ? [] : [{ column: c, value: opsPerSecond(cell), label: fmtRate(opsPerSecond(cell)).replace(' ', '') }];
      }),
    }))
    .filter((g) => g.bars.length > 0);
  const rates = speedGroups.flatMap((g) => g.bars.map((b) => b.value));
  const lo = 10 ** Math.floor(Math.log10(Math.min(...rates)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...rates)));
  const logScale = (v: number): number => (Math.log10(v / lo) / Math.log10(hi / lo)) * PLOT_WIDTH;

  const svg: string[] = [];
  const run = r.run;
  svg.push(text(16, 26, 'sievekv bench/db: operations per second by workload (log scale, longer is faster)', 'font-size="16" font-weight="bold"'));
  svg.push(
    text(
      16,
      44,
      `N = ${r.sizes.n.toLocaleString('en-US')} keys of ${r.sizes.keyBytes} B, values ${r.sizes.valueBytes} B; commit ${run.commit}; ${run.date.slice(0, 10)}; ` +
        `${run.cpus} × ${run.cpuModel}, Node ${run.node}; load ${run.loadAtStart.toFixed(1)} at start, ${run.loadAtEnd.toFixed(1)} at end`,
      'font-size="10" fill="#555"',
    ),
  );
  // Legend: one swatch per column, sievekv's first.
  let lx = 16;
  const legendY = 62;
  for (const c of r.columns) {
    const strong = c.engine === SIEVEKV;
    svg.push(`<rect x="${lx}" y="${legendY - 9}" width="12" height="10" fill="${colourOf(c)}"${strong ? ' stroke="#7a2800" stroke-width="0.6"' : ''}/>`);
    svg.push(text(lx + 16, legendY, c.label, `font-size="11"${strong ? ' font-weight="bold"' : ''}`));
    lx += 16 + c.label.length * 6.6 + 18;
  }

  const axisTop = 84;
  const groupsTop = axisTop + 8;
  const speed = drawGroups(speedGroups, groupsTop, logScale);
  // Grid: decades solid, 2× and 5× dotted; labels above and below.
  const grid: string[] = [];
  for (let d = lo; d <= hi; d *= 10) {
    for (const m of [1, 2, 5]) {
      const v = d * m;
      if (v > hi) break;
      const x = PLOT_LEFT + logScale(v);
      grid.push(`<line x1="${x.toFixed(1)}" y1="${axisTop}" x2="${x.toFixed(1)}" y2="${speed.bottom}" stroke="${m === 1 ? '#c8ccd2' : '#e3e5e8'}"${m === 1 ? '' : ' stroke-dasharray="2,3"'}/>`);
      const label = shortNumber(v);
      const weight = m === 1 ? ' fill="#333"' : ' fill="#888"';
      grid.push(text(x, axisTop - 2, label, `font-size="9" text-anchor="middle"${weight}`));
      grid.push(text(x, speed.bottom + 11, label, `font-size="9" text-anchor="middle"${weight}`));
    }
  }
  let y = speed.bottom + 32;
  const body = [...speed.under, ...grid, ...speed.over];

  // Issue 10's other figures: one linear axis per figure, from 0.
  const after = 'overwrite';
  const figures: { title: string; note: string; value: (c: ColumnInfo) => number | undefined; label: (v: number) => string }[] = [
    { title: 'disk after overwrite', note: 'closed, no compactRange', value: (c) => cellOf(r, after, c.label)?.diskBytes, label: (v) => `${(v / 1e6).toFixed(1)} MB` },
    {
      title: 'peak RSS over the run',
      note: 'max over its processes',
      value: (c) => {
        const own = r.cells.filter((x) => x.column === c.label).map((x) => x.maxRssBytes);
        return own.length === 0 ? undefined : Math.max(...own);
      },
      label: (v) => `${(v / 1e6).toFixed(0)} MB`,
    },
    { title: 'close after overwrite', note: 'sievekv target < 50 ms', value: (c) => cellOf(r, after, c.label)?.closeMs, label: (v) => `${v.toFixed(v < 10 ? 1 : 0)} ms` },
    { title: 'reopen after overwrite', note: 'sievekv target < 50 ms', value: (c) => cellOf(r, after, c.label)?.reopenMs, label: (v) => `${v.toFixed(v < 10 ? 1 : 0)} ms` },
  ];
  const figureGroups = figures
    .map((f) => {
      const bars = r.columns.flatMap((c) => {
        const v = f.value(c);
        return v === undefined ? [] : [{ column: c, value: v, label: f.label(v) }];
      });
      return { title: f.title, notes: [{ text: f.note }], bars };
    })
    .filter((g) => g.bars.length > 0);
  if (figureGroups.length > 0) {
    body.push(text(16, y, 'Space, memory, close and reopen (each on its own linear axis from 0; shorter is better)', 'font-size="13" font-weight="bold"'));
    y += 8;
    for (const g of figureGroups) {
      const max = Math.max(...g.bars.map((b) => b.value));
      const drawn = drawGroups([g], y, (v) => (v / max) * PLOT_WIDTH * 0.85);
      body.push(...drawn.under, ...drawn.over);
      y = drawn.bottom + 4;
    }
    y += 14;
  }

  const caption = [
    'Log scale: each solid gridline is ten times the one before (dotted: 2× and 5×), so equal gaps are equal ratios. sievekv\'s columns are orange, outlined;',
    'peers muted. Beside each workload: sievekv ÷ LevelDB in operations per second, each sievekv column against LevelDB\'s column of the same calling style',
    'where LevelDB has one (getSync for point reads), else its async API; green ≥ 1. Each workload of each column ran in its own process.',
    'Made by bench/chart.ts from bench/db --json; the command and the full report are in BENCHMARKS.md.',
  ];
  caption.forEach((line, i) => body.push(text(16, y + i * 13, line, 'font-size="10" fill="#555"')));
  const height = y + caption.length * 13 + 10;

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT}" font-size="11" fill="#222">`,
    `<title>${esc(`sievekv bench/db, N = ${r.sizes.n}, ${run.commit}`)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...svg,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function main(): void {
  const [input, output] = process.argv.slice(2);
  if (input === undefined || output === undefined) {
    console.error('usage: node dist/bench/chart.js RESULTS.json OUT.svg   (RESULTS.json from node dist/bench/db.js --json=RESULTS.json)');
    process.exitCode = 2;
    return;
  }
  writeFileSync(output, renderChart(readResults(input)));
  console.error(`wrote ${output}`);
}

main();
