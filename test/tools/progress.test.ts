/**
 * The CLI's progress display (tools/progress.ts) on a fake clock: nothing before the delay or in
 * mode none; a bar redrawn in place at most every `everyMs` and cleared at the end; lines at each
 * tenth of the way (or every `lineEveryMs` without a total) and a last line only after others;
 * and the mode the bin picks from SIEVEKV_PROGRESS and whether stderr is a terminal.
 */
import { describe, expect, it } from 'vitest';
import { Progress, progressMode } from '../../src/tools/progress.js';

function setup(mode: 'bar' | 'lines' | 'none', timing: { delayMs?: number; everyMs?: number; lineEveryMs?: number } = {}) {
  let now = 0;
  let text = '';
  const p = new Progress({ write: (s: string) => (text += s) }, mode, 'copy', 'bytes', { ...timing, now: () => now });
  return {
    p,
    at: (ms: number) => void (now = ms),
    text: () => text,
  };
}

describe('Progress', () => {
  it('lines: one at each tenth of the way after the delay, then a last one', () => {
    const s = setup('lines', { delayMs: 1000 });
    for (let i = 0; i <= 100; i++) {
      s.at(i * 20); // 2 s in all: the first second is the delay
      s.p.update(i * 1024 * 1024, 100 * 1024 * 1024);
    }
    s.p.finish();
    const lines = s.text().trimEnd().split('\n');
    expect(lines[0]).toBe('sievekv: copy: 50% (50.0 MiB of 100.0 MiB)');
    expect(lines.slice(1, -1).map((l) => /: (\d+)%/.exec(l)![1])).toEqual(['60', '70', '80', '90']);
    expect(lines.at(-1)).toBe('sievekv: copy: done (100.0 MiB of 100.0 MiB)');
  });

  it('lines: work done before the delay shows nothing at all, not even a last line', () => {
    const s = setup('lines', { delayMs: 1000 });
    for (let i = 0; i <= 10; i++) {
      s.at(i * 50);
      s.p.update(i, 10);
    }
    s.p.finish();
    expect(s.text()).toBe('');
  });

  it('lines without a total: a count every lineEveryMs', () => {
    let now = 0;
    let text = '';
    const p = new Progress({ write: (t: string) => (text += t) }, 'lines', 'scan', { one: 'entry', many: 'entries' }, { delayMs: 0, lineEveryMs: 1000, now: () => now });
    for (let i = 1; i <= 35; i++) {
      now = i * 100;
      p.update(i * 1000, undefined, 'x');
    }
    p.finish();
    expect(text.trimEnd().split('\n')).toEqual([
      'sievekv: scan: at (1,000 entries, x)',
      'sievekv: scan: at (11,000 entries, x)',
      'sievekv: scan: at (21,000 entries, x)',
      'sievekv: scan: at (31,000 entries, x)',
      'sievekv: scan: done (35,000 entries, x)',
    ]);
  });

  it('bar: redrawn in place at most every everyMs, cleared at the end, no newline', () => {
    const s = setup('bar', { delayMs: 500, everyMs: 100 });
    for (let i = 0; i <= 100; i++) {
      s.at(i * 10);
      s.p.update(i, 100, `${i}/100 files`);
    }
    const drawn = s.text().split('\r').filter((x) => x !== '');
    // From 500 ms to 1000 ms, one draw per 100 ms.
    expect(drawn).toHaveLength(6);
    expect(drawn[0]).toBe(`copy [############............]  50% 50 B of 100 B, 50/100 files (1s)\x1b[K`);
    expect(drawn.at(-1)).toBe(`copy [########################] 100% 100 B of 100 B, 100/100 files (1s)\x1b[K`);
    s.p.finish();
    expect(s.text().endsWith('\r\x1b[K')).toBe(true);
    expect(s.text()).not.toContain('\n');
  });

  it('none: nothing, whatever happens', () => {
    const s = setup('none', { delayMs: 0 });
    s.at(10_000);
    s.p.update(5, 10);
    s.p.finish();
    expect(s.text()).toBe('');
  });

  it('the mode: SIEVEKV_PROGRESS when set, else a bar on a terminal and lines elsewhere', () => {
    expect(progressMode(undefined, true)).toBe('bar');
    expect(progressMode(undefined, false)).toBe('lines');
    expect(progressMode('none', true)).toBe('none');
    expect(progressMode('off', true)).toBe('none');
    expect(progressMode('bar', false)).toBe('bar');
    expect(progressMode('lines', true)).toBe('lines');
    expect(progressMode('bogus', false)).toBe('lines');
  });
});
