/**
 * A small SVG chart writer for `npm run fpr-report`: one or more panels side by side sharing a
 * linear x axis and a logarithmic y axis (whole decades), lines and markers per series, a title
 * and one legend below the panels. Hand-written SVG 1.1, no dependency; the output is a pure
 * function of the spec (no dates, no randomness), so a re-run rewrites the same bytes.
 *
 * Text is never measured by a renderer here, so widths are estimated (≈ 0.6 em per character for
 * the sans-serif fonts used) and the layout leaves generous room; the legend wraps onto more rows
 * when its items do not fit.
 */

export interface ChartPoint {
  readonly x: number;
  readonly y: number;
}

/** A marker: a filled circle for a value, or an open down-triangle for "below this bound". */
export interface ChartMarker extends ChartPoint {
  readonly shape: 'circle' | 'below';
}

export interface ChartSeries {
  readonly color: string;
  /** Drawn as a polyline through the points in order (points outside the y range are clipped). */
  readonly line?: readonly ChartPoint[];
  /** SVG stroke-dasharray for the line, e.g. "6 4"; solid when absent. */
  readonly dash?: string;
  readonly markers?: readonly ChartMarker[];
}

export interface ChartPanel {
  readonly title: string;
  readonly series: readonly ChartSeries[];
}

/** A legend entry: a colour swatch (for a policy), or a sample of a line or marker style. */
export interface LegendItem {
  readonly label: string;
  readonly kind: 'swatch' | 'line' | 'dashed' | 'circle' | 'below';
  readonly color: string;
}

export interface LogChartSpec {
  readonly title: string;
  readonly subtitle?: string;
  readonly xLabel: string;
  readonly yLabel: string;
  /** The data's x range; the axis extends half a unit beyond it so edge markers show whole. */
  readonly xMin: number;
  readonly xMax: number;
  /** Labelled x ticks at the multiples of `xLabelStep`, minor ticks at every integer. */
  readonly xLabelStep: number;
  /** The y axis spans 10^yMinExp .. 10^yMaxExp (integers). */
  readonly yMinExp: number;
  readonly yMaxExp: number;
  readonly panels: readonly ChartPanel[];
  readonly legend: readonly LegendItem[];
  /** Small print under the legend (e.g. how the data was made). */
  readonly footnote?: string;
}

const FONT = "system-ui, -apple-system, 'Segoe UI', 'Helvetica Neue', Arial, 'DejaVu Sans', sans-serif";
const WIDTH = 1000;
const MARGIN_LEFT = 78;
const MARGIN_RIGHT = 24;
const PANEL_GAP = 66;
const PLOT_HEIGHT = 360;
const AXIS_COLOR = '#333';
const GRID_COLOR = '#e3e3e3';
const MINOR_GRID_COLOR = '#f3f3f3';
const TEXT_COLOR = '#222';
const MUTED_TEXT = '#555';
/** Axis room beyond the data's x range, in x units. */
const X_PAD = 0.5;

/** Coordinates rounded to 0.1 px: short output, identical across runs. */
function num(v: number): string {
  if (!Number.isFinite(v)) throw new RangeError(`non-finite coordinate ${v}`);
  const r = Math.round(v * 10) / 10;
  return Object.is(r, -0) ? '0' : String(r);
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Estimated rendered width of `text` at `size` px. */
function textWidth(text: string, size: number): number {
  return text.length * size * 0.6;
}

/**
 * Text content with `^{…}` marking superscripts ("2^{−b}"), as escaped SVG: tspans raise and
 * lower the baseline, which renders the same with any font (no superscript glyphs needed).
 */
function richContent(content: string, size: number): string {
  const small = Math.round(size * 0.75);
  const rise = Math.round(size * 0.4);
  let raised = false;
  let out = '';
  for (const part of content.split(/(\^\{[^}]*\})/)) {
    if (part === '') continue;
    if (part.startsWith('^{')) {
      out += `<tspan dy="-${rise}" font-size="${small}">${escapeXml(part.slice(2, -1))}</tspan>`;
      raised = true;
    } else if (raised) {
      // A tspan's own leading space is dropped by some renderers (librsvg): put it between tags.
      const lead = part.startsWith(' ') ? ' ' : '';
      out += `${lead}<tspan dy="${rise}">${escapeXml(part.slice(lead.length))}</tspan>`;
      raised = false;
    } else {
      out += escapeXml(part);
    }
  }
  return out;
}

/** Width estimate of rich content (superscripts count at their smaller size). */
function richWidth(content: string, size: number): number {
  let w = 0;
  for (const part of content.split(/(\^\{[^}]*\})/)) {
    w += part.startsWith('^{') ? textWidth(part.slice(2, -1), size * 0.75) : textWidth(part, size);
  }
  return w;
}

function text(
  x: number,
  y: number,
  content: string,
  opts: { size: number; anchor?: 'start' | 'middle' | 'end'; weight?: string; color?: string; rotate?: boolean },
): string {
  const anchor = opts.anchor ?? 'start';
  const attrs = [
    `x="${num(x)}"`,
    `y="${num(y)}"`,
    `font-size="${opts.size}"`,
    `text-anchor="${anchor}"`,
    `fill="${opts.color ?? TEXT_COLOR}"`,
  ];
  if (opts.weight !== undefined) attrs.push(`font-weight="${opts.weight}"`);
  if (opts.rotate) attrs.push(`transform="rotate(-90 ${num(x)} ${num(y)})"`);
  return `<text ${attrs.join(' ')}>${richContent(content, opts.size)}</text>`;
}

/** A decade tick label: "1", "10^{−3}". */
function decadeLabel(x: number, y: number, exp: number, size: number): string {
  if (exp === 0) return text(x, y, '1', { size, anchor: 'end' });
  return text(x, y, `10^{${exp < 0 ? `\u2212${-exp}` : String(exp)}}`, { size, anchor: 'end' });
}

function markerShape(shape: ChartMarker['shape'], x: number, y: number, color: string): string {
  if (shape === 'circle') {
    return `<circle cx="${num(x)}" cy="${num(y)}" r="4" fill="${color}" stroke="#fff" stroke-width="1"/>`;
  }
  // Open triangle pointing down, its tip at the bound.
  const pts = [
    [x - 5, y - 8],
    [x + 5, y - 8],
    [x, y],
  ];
  return `<polygon points="${pts.map(([a, b]) => `${num(a!)},${num(b!)}`).join(' ')}" fill="#fff" stroke="${color}" stroke-width="1.5"/>`;
}

function legendSample(item: LegendItem, x: number, cy: number): string {
  switch (item.kind) {
    case 'swatch':
      return `<rect x="${num(x)}" y="${num(cy - 6)}" width="22" height="12" rx="2" fill="${item.color}"/>`;
    case 'line':
      return `<line x1="${num(x)}" y1="${num(cy)}" x2="${num(x + 22)}" y2="${num(cy)}" stroke="${item.color}" stroke-width="2"/>`;
    case 'dashed':
      return `<line x1="${num(x)}" y1="${num(cy)}" x2="${num(x + 22)}" y2="${num(cy)}" stroke="${item.color}" stroke-width="1.8" stroke-dasharray="6 4"/>`;
    case 'circle':
      return markerShape('circle', x + 11, cy, item.color);
    case 'below':
      return markerShape('below', x + 11, cy + 4, item.color);
  }
}

/** Renders the chart as a standalone SVG document. */
export function renderLogChart(spec: LogChartSpec): string {
  const { xMin, xMax, yMinExp, yMaxExp } = spec;
  if (!(xMax > xMin) || !(yMaxExp > yMinExp) || spec.panels.length === 0) {
    throw new RangeError('renderLogChart: empty axis range or no panels');
  }
  const panelCount = spec.panels.length;
  const plotWidth = (WIDTH - MARGIN_LEFT - MARGIN_RIGHT - PANEL_GAP * (panelCount - 1)) / panelCount;

  let y = 34;
  const out: string[] = [];
  out.push(text(WIDTH / 2, y, spec.title, { size: 20, anchor: 'middle', weight: '600' }));
  if (spec.subtitle !== undefined) {
    y += 22;
    out.push(text(WIDTH / 2, y, spec.subtitle, { size: 13, anchor: 'middle', color: MUTED_TEXT }));
  }
  const plotTop = y + 46;
  const plotBottom = plotTop + PLOT_HEIGHT;

  const sy = (v: number): number => plotBottom - ((Math.log10(v) - yMinExp) / (yMaxExp - yMinExp)) * PLOT_HEIGHT;
  const inY = (v: number): boolean => v >= 10 ** yMinExp * (1 - 1e-9) && v <= 10 ** yMaxExp * (1 + 1e-9);

  spec.panels.forEach((panel, p) => {
    const left = MARGIN_LEFT + p * (plotWidth + PANEL_GAP);
    const right = left + plotWidth;
    const sx = (v: number): number => left + ((v - xMin + X_PAD) / (xMax - xMin + 2 * X_PAD)) * plotWidth;
    const clipId = `plot${p}`;
    out.push(`<g>`);
    out.push(text((left + right) / 2, plotTop - 14, panel.title, { size: 14, anchor: 'middle', weight: '600' }));
    out.push(
      `<clipPath id="${clipId}"><rect x="${num(left)}" y="${num(plotTop)}" width="${num(plotWidth)}" height="${num(PLOT_HEIGHT)}"/></clipPath>`,
    );
    out.push(`<rect x="${num(left)}" y="${num(plotTop)}" width="${num(plotWidth)}" height="${num(PLOT_HEIGHT)}" fill="#fff"/>`);
    // Grid: minor (2..9 × 10^e) and major decades on y; every integer on x.
    for (let e = yMinExp; e < yMaxExp; e++) {
      for (let m = 2; m <= 9; m++) {
        const gy = sy(m * 10 ** e);
        out.push(`<line x1="${num(left)}" y1="${num(gy)}" x2="${num(right)}" y2="${num(gy)}" stroke="${MINOR_GRID_COLOR}" stroke-width="1"/>`);
      }
    }
    for (let x = Math.ceil(xMin); x <= xMax; x++) {
      const gx = sx(x);
      const major = x % spec.xLabelStep === 0;
      out.push(
        `<line x1="${num(gx)}" y1="${num(plotTop)}" x2="${num(gx)}" y2="${num(plotBottom)}" stroke="${major ? GRID_COLOR : MINOR_GRID_COLOR}" stroke-width="1"/>`,
      );
    }
    for (let e = yMinExp; e <= yMaxExp; e++) {
      const gy = sy(10 ** e);
      out.push(`<line x1="${num(left)}" y1="${num(gy)}" x2="${num(right)}" y2="${num(gy)}" stroke="${GRID_COLOR}" stroke-width="1"/>`);
      out.push(`<line x1="${num(left - 5)}" y1="${num(gy)}" x2="${num(left)}" y2="${num(gy)}" stroke="${AXIS_COLOR}" stroke-width="1"/>`);
      out.push(decadeLabel(left - 8, gy + 4, e, 12));
    }
    for (let x = Math.ceil(xMin); x <= xMax; x++) {
      const gx = sx(x);
      const major = x % spec.xLabelStep === 0;
      out.push(
        `<line x1="${num(gx)}" y1="${num(plotBottom)}" x2="${num(gx)}" y2="${num(plotBottom + (major ? 5 : 3))}" stroke="${AXIS_COLOR}" stroke-width="1"/>`,
      );
      if (major) out.push(text(gx, plotBottom + 19, String(x), { size: 12, anchor: 'middle' }));
    }
    // Data, clipped to the plot area.
    out.push(`<g clip-path="url(#${clipId})">`);
    for (const s of panel.series) {
      if (s.line !== undefined && s.line.length > 0) {
        const pts = s.line.filter((pt) => pt.y > 0).map((pt) => `${num(sx(pt.x))},${num(sy(pt.y))}`);
        const dash = s.dash === undefined ? '' : ` stroke-dasharray="${s.dash}"`;
        out.push(
          `<polyline points="${pts.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round"${dash}/>`,
        );
      }
    }
    for (const s of panel.series) {
      for (const m of s.markers ?? []) {
        if (m.y > 0 && inY(m.y)) out.push(markerShape(m.shape, sx(m.x), sy(m.y), s.color));
      }
    }
    out.push(`</g>`);
    // Axes frame on top of the data.
    out.push(
      `<rect x="${num(left)}" y="${num(plotTop)}" width="${num(plotWidth)}" height="${num(PLOT_HEIGHT)}" fill="none" stroke="${AXIS_COLOR}" stroke-width="1"/>`,
    );
    out.push(text((left + right) / 2, plotBottom + 40, spec.xLabel, { size: 13, anchor: 'middle' }));
    out.push(`</g>`);
  });
  out.push(text(20, (plotTop + plotBottom) / 2, spec.yLabel, { size: 13, anchor: 'middle', rotate: true }));

  // Legend: items laid out in rows, centred, wrapping when a row is full.
  const legendTop = plotBottom + 70;
  const rowHeight = 24;
  const itemWidths = spec.legend.map((it) => 22 + 8 + richWidth(it.label, 13) + 26);
  const rows: number[][] = [[]];
  let rowWidth = 0;
  spec.legend.forEach((_, i) => {
    const w = itemWidths[i]!;
    if (rowWidth + w > WIDTH - 40 && rows[rows.length - 1]!.length > 0) {
      rows.push([]);
      rowWidth = 0;
    }
    rows[rows.length - 1]!.push(i);
    rowWidth += w;
  });
  rows.forEach((row, r) => {
    const total = row.reduce((sum, i) => sum + itemWidths[i]!, 0) - 26;
    let x = (WIDTH - total) / 2;
    const cy = legendTop + r * rowHeight;
    for (const i of row) {
      const item = spec.legend[i]!;
      out.push(legendSample(item, x, cy));
      out.push(text(x + 30, cy + 4.5, item.label, { size: 13 }));
      x += itemWidths[i]!;
    }
  });
  let height = legendTop + (rows.length - 1) * rowHeight + 20;
  if (spec.footnote !== undefined) {
    height += 12;
    out.push(text(WIDTH / 2, height, spec.footnote, { size: 11, anchor: 'middle', color: MUTED_TEXT }));
    height += 8;
  }
  height += 10;

  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${num(height)}" viewBox="0 0 ${WIDTH} ${num(height)}" font-family="${escapeXml(FONT)}" role="img">`,
    `<title>${escapeXml(spec.title)}</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...out,
    `</svg>`,
    '',
  ].join('\n');
}
