import { html, raw, type Html } from './html.ts'

export interface Series {
  label: string
  /** One value per bucket, oldest first; null where the bucket is empty (a line breaks there). */
  values: (number | null)[]
  className: string
}

export interface ChartOptions {
  title: string
  /** The chart in words, for screen readers (the SVG is an image to them). */
  summary: string
  /** The time of the first bucket and the bucket width. */
  start: Date
  bucketSeconds: number
  unit: string
  series: Series[]
  kind: 'bars' | 'lines'
}

const W = 720
const H = 200
// The top leaves room for the unit above the value axis: beside the numbers a long unit ("payments") was cut off.
const PAD = { left: 48, right: 8, top: 24, bottom: 24 }

/** A value axis top that reads well: 1, 2 or 5 times a power of ten. */
function niceMax(max: number): number {
  if (max <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(max))
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= max)!
}

const clock = (at: Date): string => at.toISOString().slice(11, 16)

/**
 * A chart as inline SVG, drawn on the server: no script, no library, visible in the first paint and
 * scaled to the page width. Bars for counts, lines for durations.
 */
export function chart(options: ChartOptions): Html {
  const buckets = Math.max(1, ...options.series.map((s) => s.values.length))
  const top = niceMax(Math.max(0, ...options.series.flatMap((s) => s.values.map((v) => v ?? 0))))
  const plotW = W - PAD.left - PAD.right
  const plotH = H - PAD.top - PAD.bottom
  const x = (i: number) => PAD.left + (i / buckets) * plotW
  const y = (v: number) => PAD.top + plotH - (v / top) * plotH
  const step = plotW / buckets
  const shapes = options.series.map((series) => {
    if (options.kind === 'bars') {
      const rects = series.values
        .map((v, i) =>
          v !== null && v > 0
            ? `<rect x="${x(i).toFixed(1)}" y="${y(v).toFixed(1)}" width="${Math.max(1, step - 1).toFixed(1)}" height="${(PAD.top + plotH - y(v)).toFixed(1)}"/>`
            : '',
        )
        .join('')
      return raw(`<g class="${series.className}">${rects}</g>`)
    }
    // One polyline per run of filled buckets; a lone bucket is a dot.
    const runs: string[][] = [[]]
    series.values.forEach((v, i) => {
      if (v === null) runs.push([])
      else runs.at(-1)!.push(`${(x(i) + step / 2).toFixed(1)},${y(v).toFixed(1)}`)
    })
    const marks = runs
      .filter((run) => run.length > 0)
      .map((run) => {
        if (run.length > 1) return `<polyline class="${series.className}" fill="none" points="${run.join(' ')}"/>`
        const [cx, cy] = run[0]!.split(',')
        return `<circle class="${series.className}" cx="${cx}" cy="${cy}" r="3"/>`
      })
    return raw(marks.join(''))
  })
  const end = new Date(options.start.getTime() + buckets * options.bucketSeconds * 1000)
  const mid = new Date((options.start.getTime() + end.getTime()) / 2)
  return html`<figure class="chart">
    <figcaption>${options.title}</figcaption>
    <svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${options.summary}">
      <title>${options.summary}</title>
      <g class="grid">
        <line x1="${PAD.left}" y1="${y(top)}" x2="${W - PAD.right}" y2="${y(top)}" />
        <line x1="${PAD.left}" y1="${y(top / 2)}" x2="${W - PAD.right}" y2="${y(top / 2)}" />
        <line x1="${PAD.left}" y1="${y(0)}" x2="${W - PAD.right}" y2="${y(0)}" />
      </g>
      <g class="axis">
        <text x="2" y="12" class="unit">${options.unit}</text>
        <text x="${PAD.left - 6}" y="${y(top) + 4}" text-anchor="end">${top}</text>
        <text x="${PAD.left - 6}" y="${y(top / 2) + 4}" text-anchor="end">${top / 2}</text>
        <text x="${PAD.left - 6}" y="${y(0) + 4}" text-anchor="end">0</text>
        <text x="${PAD.left}" y="${H - 6}">${clock(options.start)}</text>
        <text x="${PAD.left + plotW / 2}" y="${H - 6}" text-anchor="middle">${clock(mid)}</text>
        <text x="${W - PAD.right}" y="${H - 6}" text-anchor="end">${clock(end)} UTC</text>
      </g>
      ${shapes}
    </svg>
    ${
      options.series.length > 1
        ? html`<ul class="legend">${options.series.map((s) => html`<li><span class="swatch ${s.className}"></span>${s.label}</li>`)}</ul>`
        : ''
    }
  </figure>`
}

/** Buckets keyed by their start time, spread over `count` slots from `start` (missing ones are `empty`). */
export function fillBuckets<T extends { at: Date }, E extends number | null>(
  rows: T[],
  start: Date,
  bucketSeconds: number,
  count: number,
  value: (row: T) => number,
  empty: E,
): (number | E)[] {
  const values = new Array<number | E>(count).fill(empty)
  for (const row of rows) {
    const i = Math.floor((row.at.getTime() - start.getTime()) / (bucketSeconds * 1000))
    if (i >= 0 && i < count) values[i] = value(row)
  }
  return values
}
