import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import type { StageLatencyRow } from './api-types.js'
import { STAGE_LABELS } from './labels.js'

/** Axis marks, in seconds, with their names: the steps an operator thinks in, on a log scale. */
const MARKS: readonly [number, string][] = [
  [1, '1 s'],
  [10, '10 s'],
  [60, '1 min'],
  [600, '10 min'],
  [3600, '1 h'],
  [6 * 3600, '6 h'],
  [86_400, '1 d'],
  [7 * 86_400, '7 d'],
  [30 * 86_400, '30 d'],
  [366 * 86_400, '1 y']
]

const ROW_HEIGHT = 26
/** The time axis below the bars: its marks, its label and some air. */
const AXIS_HEIGHT = 90
const COLOURS = { p95: '#a9c8ea', p50: '#1f5fa8', max: '#1b1f24', grid: '#e1e5ea', text: '#1b1f24' }

export const rowLabel = (row: StageLatencyRow) =>
  row.site === null ? STAGE_LABELS[row.stage] : `${STAGE_LABELS[row.stage]} · ${row.site}`

/** The marks around the latencies: the largest at or below the least, the smallest at or above the most. */
function range(values: readonly number[]): [number, number] {
  const least = Math.min(...values)
  const most = Math.max(...values)
  const low = [...MARKS].reverse().find(([mark]) => mark <= least)?.[0] ?? 1
  const high = MARKS.find(([mark]) => mark > low && mark >= most)?.[0] ?? MARKS[MARKS.length - 1]![0]
  return [low, high]
}

/**
 * Horizontal bars per stage and site: the 95th percentile wide and light, the median narrow and
 * dark inside it, the longest as a ring. uPlot draws categories on a vertical x scale (`ori: 1`)
 * with its bars path builder; the log scale keeps minutes and days readable on one axis.
 */
export function LatencyChart({ rows }: { rows: readonly StageLatencyRow[] }) {
  const holder = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = holder.current!
    const atLeastOne = (value: number | null) => (value === null ? null : Math.max(1, value))
    const data: uPlot.AlignedData = [
      rows.map((_, index) => index),
      rows.map((row) => atLeastOne(row.p95_s)),
      rows.map((row) => atLeastOne(row.p50_s)),
      rows.map((row) => atLeastOne(row.max_s))
    ]
    const [low, high] = range(data.slice(1).flatMap((series) => (series as (number | null)[]).filter((v): v is number => v !== null)))
    const bars = (factor: number, max: number) => uPlot.paths.bars!({ size: [factor, max], align: 0 })
    const font = '12px system-ui, "Liberation Sans", "DejaVu Sans", sans-serif'
    const options: uPlot.Options = {
      width: Math.max(320, element.clientWidth),
      height: rows.length * ROW_HEIGHT + AXIS_HEIGHT,
      legend: { show: false },
      cursor: { show: false },
      select: { show: false, left: 0, top: 0, width: 0, height: 0 },
      scales: {
        x: { time: false, ori: 1, dir: -1, range: [-0.5, rows.length - 0.5] },
        y: { distr: 3, log: 10, ori: 0, dir: 1, range: [low, high] }
      },
      axes: [
        {
          scale: 'x',
          side: 3,
          size: 190,
          font,
          stroke: COLOURS.text,
          splits: () => rows.map((_, index) => index),
          values: () => rows.map(rowLabel),
          grid: { show: false },
          ticks: { show: false }
        },
        {
          scale: 'y',
          side: 2,
          font,
          label: 'time from the event (log scale)',
          labelFont: font,
          labelSize: 20,
          stroke: COLOURS.text,
          splits: () => MARKS.map(([mark]) => mark).filter((mark) => mark >= low && mark <= high),
          // uPlot keeps only powers of ten on a log axis by default; these marks are the steps chosen above.
          filter: (_u, splits) => splits,
          values: (_u, splits) => splits.map((split) => MARKS.find(([mark]) => mark === split)?.[1] ?? ''),
          grid: { stroke: COLOURS.grid, width: 1 },
          ticks: { stroke: COLOURS.grid }
        }
      ],
      series: [
        {},
        { label: '95th percentile', fill: COLOURS.p95, stroke: COLOURS.p95, paths: bars(0.75, 20), points: { show: false }, fillTo: low },
        { label: 'median', fill: COLOURS.p50, stroke: COLOURS.p50, paths: bars(0.35, 9), points: { show: false }, fillTo: low },
        {
          label: 'longest',
          stroke: COLOURS.max,
          paths: () => null,
          points: { show: true, size: 9, width: 2, stroke: COLOURS.max, fill: '#ffffff' }
        }
      ]
    }
    const chart = new uPlot(options, data, element)
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(320, element.clientWidth), height: options.height }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [rows])
  return <div ref={holder} class="chart" />
}
