import type autocannon from 'autocannon'
import { CLASSIFICATION_STAGE, STAGES, STATUSES } from '../src/vocabulary.js'
import { percentile } from './load.js'
import { randomWindow } from './scenarios.js'

const DAY_MS = 86_400_000
/** POST /v1/events writes these event numbers over and over: the soak store does not grow run after run. */
const WRITTEN_EVENTS_FIRST = 5_000_001
const WRITTEN_EVENTS_COUNT = 20_000
const EVENTS_PER_BATCH = 10

export interface MixContext {
  token: string
  username: string
  password: string
  sites: readonly string[]
  eventCount: number
  oldest: number
  newest: number
}

interface Kind {
  name: string
  /** Requests of this kind per 1000. */
  weight: number
  build(): Pick<autocannon.Request, 'method' | 'path' | 'body' | 'headers'>
}

export interface KindTally {
  name: string
  weight: number
  statuses: Record<string, number>
  /** ms from building the request (just before it is written) to its parsed response. */
  latencies: number[]
}

const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)]!
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * Mostly reads, some writes, a few logins: the traffic of pipeline processes, probes and people.
 * Weights per 1000 requests.
 */
function kinds(context: MixContext): Kind[] {
  // Fresh header objects per request: autocannon writes Content-Length into the object it is given.
  const auth = () => ({ authorization: context.token })
  const json = () => ({ ...auth(), 'content-type': 'application/json' })
  const randomEvent = () => 1 + Math.floor(Math.random() * context.eventCount)
  const window = (length: number) => {
    const { start, end } = randomWindow(context.oldest, context.newest, length)
    return `start_time_utc=${encodeURIComponent(iso(start))}&end_time_utc=${encodeURIComponent(iso(end))}`
  }
  let written = 0
  return [
    { name: 'GET /auth/verify', weight: 320, build: () => ({ method: 'GET', path: '/auth/verify', headers: auth() }) },
    {
      name: 'GET event-status',
      weight: 200,
      build: () => ({ method: 'GET', path: `/v1/event-tracer/event-status/${randomEvent()}`, headers: auth() })
    },
    {
      name: 'GET baseband-callbacks 1 day',
      weight: 150,
      build: () => ({ method: 'GET', path: `/v1/event-tracer/baseband-callbacks?${window(DAY_MS)}`, headers: auth() })
    },
    {
      name: 'GET /v1/events 7 days',
      weight: 160,
      build: () => ({ method: 'GET', path: `/v1/events?${window(7 * DAY_MS)}&limit=100`, headers: auth() })
    },
    {
      name: 'POST update-trace',
      weight: 140,
      build: () => {
        const stage = pick([CLASSIFICATION_STAGE, ...STAGES])
        const body = { event: randomEvent(), site: pick(context.sites), stage, status: pick(STATUSES) }
        return { method: 'POST', path: '/v1/event-tracer/update-trace', headers: json(), body: JSON.stringify(body) }
      }
    },
    {
      name: `POST /v1/events (${EVENTS_PER_BATCH} a batch)`,
      weight: 28,
      build: () => {
        const events = Array.from({ length: EVENTS_PER_BATCH }, () => ({
          event_no: WRITTEN_EVENTS_FIRST + (written++ % WRITTEN_EVENTS_COUNT),
          // Inside the seeded range, so the next run still finds the newest seeded event last.
          timestamp_utc: iso(context.oldest + Math.floor(Math.random() * (context.newest - context.oldest))),
          snr: 8 + Math.random() * 40,
          dm: Math.random() * 1500,
          known_source_name: pick(['EXT', 'AMB', 'GAL', 'B0329+54']),
          actions: { want: { intensity: true, baseband: Math.random() < 0.2 }, got: { intensity: true } }
        }))
        return { method: 'POST', path: '/v1/events', headers: json(), body: JSON.stringify(events) }
      }
    },
    {
      name: 'POST /auth',
      weight: 2,
      build: () => ({
        method: 'POST',
        path: '/auth',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: context.username, password: context.password })
      })
    }
  ]
}

/**
 * One autocannon request that becomes a random kind each time it is sent, and the tallies its
 * responses fill. Each connection has one request in flight, so its context carries the kind and
 * the send time to the response.
 */
export function soakMix(context: MixContext): { requests: autocannon.Request[]; tallies: KindTally[] } {
  const all = kinds(context)
  const total = all.reduce((sum, kind) => sum + kind.weight, 0)
  const tallies: KindTally[] = all.map((kind) => ({ name: kind.name, weight: kind.weight, statuses: {}, latencies: [] }))
  const choose = () => {
    let ticket = Math.random() * total
    for (const [index, kind] of all.entries()) {
      ticket -= kind.weight
      if (ticket < 0) return index
    }
    return all.length - 1
  }
  const request: autocannon.Request = {
    setupRequest: (req, context) => {
      const index = choose()
      Object.assign(context, { kind: index, sentAt: performance.now() })
      return { ...req, body: undefined, ...all[index]!.build() }
    },
    onResponse: (status: number, _body: string, context: unknown) => {
      const { kind, sentAt } = context as { kind?: number; sentAt?: number }
      if (kind === undefined || sentAt === undefined) return
      const tally = tallies[kind]!
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1
      tally.latencies.push(performance.now() - sentAt)
    }
  }
  return { requests: [request], tallies }
}

export const kindPercentile = (tally: KindTally, fraction: number) =>
  percentile([...tally.latencies].sort((a, b) => a - b), fraction)
