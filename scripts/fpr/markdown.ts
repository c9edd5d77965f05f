/**
 * Markdown output for `npm run fpr-report`: the rate tables, and the rewrite of one section of a
 * document that other people edit (docs/filters.md), leaving every other byte as it was.
 */

/** An ATX heading line outside code fences: its level (1..6) and text. */
interface Heading {
  readonly line: number;
  readonly level: number;
  readonly text: string;
}

function headings(lines: readonly string[]): Heading[] {
  const out: Heading[] = [];
  let fence: string | undefined;
  lines.forEach((line, i) => {
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f !== null) {
      const marker = f[1]!;
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const h = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$/.exec(line);
    if (h !== null) out.push({ line: i, level: h[1]!.length, text: h[2]!.trim() });
  });
  return out;
}

/**
 * Replaces the body of the section headed `heading` (any level; the first such heading) with
 * `body`: everything after the heading line up to the next heading of the same or a higher level
 * (outside code fences), or the end of the document. If there is no such heading, appends
 * `## heading` and the body at the end. `body` should not itself contain headings of that level
 * or higher, or a second run would stop at them. The result ends the section with one blank line
 * before the next heading.
 */
export function replaceSection(doc: string, heading: string, body: string): string {
  const lines = doc.split('\n');
  const all = headings(lines);
  const at = all.findIndex((h) => h.text === heading);
  const content = body.replace(/\s+$/, '');
  if (at < 0) {
    const head = doc.replace(/\s+$/, '');
    return `${head === '' ? '' : `${head}\n\n`}## ${heading}\n\n${content}\n`;
  }
  const start = all[at]!;
  const next = all.slice(at + 1).find((h) => h.level <= start.level);
  const before = lines.slice(0, start.line + 1);
  const after = next === undefined ? [] : lines.slice(next.line);
  const parts = [...before, '', content, ''];
  if (after.length > 0) parts.push(...after);
  return parts.join('\n');
}

/**
 * A rate as a percentage with three significant digits, in plain decimals ("0.819%",
 * "0.000954%"); zero as "0".
 */
export function formatRate(p: number): string {
  if (p === 0) return '0';
  const pct = p * 100;
  const digits = Math.max(0, 2 - Math.floor(Math.log10(pct)));
  return `${pct.toFixed(Math.min(digits, 20))}%`;
}

/** A markdown table; cells are escaped for pipes. Column 0 and numeric columns align right. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const lines = [
    `| ${header.map(esc).join(' | ')} |`,
    `|${header.map(() => '---:').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ];
  return lines.join('\n');
}
