import type { Filters } from './grid-model.js'
import type { CellState } from './labels.js'
import { DEFAULT_PRESET, PRESETS, type WindowChoice } from './time-window.js'

/** What the operator looks at, all of which a shared link carries: the window, the filters, the open event. */
export interface View {
  choice: WindowChoice
  filters: Filters
  /** The event whose panel is open. */
  event: number | undefined
}

export const DEFAULT_VIEW: View = { choice: { preset: DEFAULT_PRESET }, filters: { verdict: 'all', site: 'all' }, event: undefined }

const VERDICTS: readonly string[] = ['complete', 'in_progress', 'stuck', 'contradiction'] satisfies CellState[]
const SITE = /^[a-z][a-z0-9_]*$/
/** A bound as the link writes it: UTC to the minute (or second), `2026-03-01T12:30Z`. */
const BOUND = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)Z$/

function bound(value: string | null): number | undefined {
  const match = BOUND.exec(value ?? '')
  if (match === null) return undefined
  const time = Date.parse(`${match[1]}Z`)
  // Date.parse rolls no impossible date over, but says NaN; a real time reads back as written.
  return Number.isNaN(time) || !new Date(time).toISOString().startsWith(match[1]!) ? undefined : time
}

const writeBound = (time: number) => {
  const iso = new Date(time).toISOString()
  return `${iso.endsWith(':00.000Z') ? iso.slice(0, 16) : iso.slice(0, 19)}Z`
}

/**
 * The view a query string names, `?window=3d&verdict=stuck&site=kko&event=5000`, or with fixed
 * bounds `?from=2026-03-01T12:30Z&to=2026-03-02T00:00Z`. What is missing or not understood takes
 * the default, so that an old or mistyped link still opens a page.
 */
export function viewOfQuery(search: string): View {
  const query = new URLSearchParams(search)
  const from = bound(query.get('from'))
  const to = bound(query.get('to'))
  const preset = PRESETS.find((candidate) => candidate.id === query.get('window'))?.id
  const choice: WindowChoice =
    from !== undefined && to !== undefined && from < to ? { start: from, end: to } : { preset: preset ?? DEFAULT_PRESET }
  const verdict = query.get('verdict') ?? ''
  const site = query.get('site') ?? ''
  const event = Number(query.get('event') ?? '')
  return {
    choice,
    filters: { verdict: VERDICTS.includes(verdict) ? (verdict as CellState) : 'all', site: SITE.test(site) ? site : 'all' },
    event: query.get('event') !== null && Number.isSafeInteger(event) && event >= 0 ? event : undefined
  }
}

/** The query string of a view, defaults left out: `''` for the default view. Every value is URL-safe as it is. */
export function queryOfView(view: View): string {
  const parts: string[] = []
  if ('preset' in view.choice) {
    if (view.choice.preset !== DEFAULT_PRESET) parts.push(`window=${view.choice.preset}`)
  } else {
    parts.push(`from=${writeBound(view.choice.start)}`, `to=${writeBound(view.choice.end)}`)
  }
  if (view.filters.verdict !== 'all') parts.push(`verdict=${view.filters.verdict}`)
  if (view.filters.site !== 'all') parts.push(`site=${view.filters.site}`)
  if (view.event !== undefined) parts.push(`event=${view.event}`)
  return parts.length === 0 ? '' : `?${parts.join('&')}`
}

/** Whether two choices name the same window: a view read back from a link is a new object. */
export const sameChoice = (a: WindowChoice, b: WindowChoice) =>
  'preset' in a ? 'preset' in b && a.preset === b.preset : !('preset' in b) && a.start === b.start && a.end === b.end
