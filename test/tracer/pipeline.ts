import type { Test } from 'tap'
import type { ConfigInput } from '../../src/config.js'
import { event, get, post, tracerApp } from './fixtures.js'

/** The test clock's "now": events are placed before it. */
export const NOW = Date.parse('2026-03-01T12:00:00Z')
export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

export const iso = (ms: number) => new Date(ms).toISOString()

/** A site's datatrail member, registered with `num_files` files unless told otherwise. */
export const member = (fields: Partial<{ registered: boolean; num_files: number; missing_files: string[] }> = {}) => ({
  registered: true,
  should_be_at_minoc: true,
  larger_dataset: {},
  data_path: '/data/baseband',
  num_files: 10,
  missing_files: [],
  ...fields
})

export interface HeartbeatFields {
  id: number
  site: string
  files?: number
  finished?: boolean
  error?: string | null
}

/** What the pipeline reported of one event: written through the routes, as the pipeline writes. */
export interface EventState {
  event_no: number
  /** How long before NOW the event happened. */
  ago: number
  /** actions.want; `{baseband: true}` (the primary site) unless given. */
  want?: Record<string, boolean>
  /** The event record's tsar_classification; none unless given. */
  classification?: string
  /** Keys set complete through update-trace: `tsar`, or `{stage}@{site}`. */
  complete?: string[]
  datatrail?: Record<string, ReturnType<typeof member>>
  heartbeats?: HeartbeatFields[]
}

export const SITE_STAGES = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc'] as const

/** The four stages of a site, as `complete` keys. */
export const allStagesAt = (site: string) => SITE_STAGES.map((stage) => `${stage}@${site}`)

/**
 * An app whose clock a test sets (NOW unless moved), with a writer and a reader logged in. Tests
 * move the clock back as well as on (a writer's clock behind), and tokens live by it: the users
 * logged in a month before NOW, with tokens of a year (tracerApp).
 */
export async function pipelineApp(t: Test, env: ConfigInput = {}) {
  const clock = { now: NOW - 30 * DAY }
  const { app, writer, reader } = await tracerApp(t, env, { now: () => clock.now })
  clock.now = NOW

  const write = async (url: string, payload: unknown, method: 'POST' | 'PUT' = 'POST') => {
    const response = await post(app, url, writer, payload, method)
    if (response.statusCode !== 200) throw new Error(`${method} ${url} answered ${response.statusCode}: ${response.body}`)
  }

  /** Writes the event and what the pipeline reported of it. */
  const report = async (state: EventState) => {
    const want = state.want ?? { baseband: true }
    const classification = state.classification === undefined ? {} : { tsar_classification: state.classification }
    await write('/v1/events', [event(state.event_no, iso(NOW - state.ago), { actions: { want, got: {} }, ...classification })])
    for (const key of state.complete ?? []) {
      const [stage = '', site = 'chime'] = key === 'tsar' ? ['tsar_classification'] : key.split('@')
      await write('/v1/event-tracer/update-trace', { event: state.event_no, site, stage, status: 'complete' })
    }
    for (const [name, value] of Object.entries(state.datatrail ?? {})) {
      await write(`/v1/event-tracer/datatrail/${state.event_no}/${name}`, value, 'PUT')
    }
    if ((state.heartbeats ?? []).length > 0) {
      await write('/v1/event-tracer/heartbeats', state.heartbeats!.map((heartbeat) => heartbeatRecord(state.event_no, heartbeat)))
    }
  }

  const read = (url: string) => get(app, url, reader)
  return { app, writer, reader, clock, write, report, read }
}

function heartbeatRecord(event_no: number, { id, site, files = 10, finished = true, error = null }: HeartbeatFields) {
  return {
    event_no,
    heartbeat_id: id,
    site,
    sent: { trigger_time: iso(NOW - HOUR), error },
    received: {
      total_data_files: files,
      dir_size_gb: 1.5,
      finished_time: finished ? iso(NOW - 30 * MINUTE) : null,
      heartbeat_sent_unix_s: (NOW - 30 * MINUTE) / 1000
    }
  }
}

/** A window query string. */
export const windowQuery = (start: number | string, end: number | string) => {
  const text = (bound: number | string) => encodeURIComponent(typeof bound === 'number' ? iso(bound) : bound)
  return `start_time_utc=${text(start)}&end_time_utc=${text(end)}`
}
