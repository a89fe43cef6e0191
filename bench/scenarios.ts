import type autocannon from 'autocannon'
import type { WriteCheck } from './update-trace.js'

const DAY_MS = 86_400_000

export interface Window {
  start: number
  end: number
}

/** What the scenarios need from the running bench: addresses, tokens and the seeded range. */
export interface ScenarioContext {
  token: string
  expiredToken: string
  username: string
  password: string
  /** Seeded events are numbered 1 … eventCount. */
  eventCount: number
  /** Event times of the oldest and newest seeded events (ms). */
  oldest: number
  newest: number
  /** The event list's window, and the cursor its page 500 starts from (see page500Cursor). */
  eventsWindow: Window
  page500Cursor: string
  updateTrace: (token: string) => { requests: autocannon.Request[]; check: () => Promise<WriteCheck> }
}

export interface Scenario {
  id: string
  title: string
  /** `workers`: the service with WORKERS=2, a primary and two workers on one port. */
  server: 'service' | 'bare' | 'workers'
  connections: number
  /** Also measured with one connection: latency without queueing, i.e. the service time of a request. */
  probeSingleConnection?: boolean
  /** The status every response should have; anything else counts as an error of the scenario. */
  expectedStatus: number
  /** Requests for one run (fresh each run), and for writes the check of what was stored. */
  prepare(): { requests: autocannon.Request[]; check?: () => Promise<WriteCheck> }
}

const iso = (ms: number) => new Date(ms).toISOString()

/** A window of `length` ms placed at random inside the seeded range: a different day each request. */
export function randomWindow(oldest: number, newest: number, length: number): Window {
  const start = oldest + Math.floor(Math.random() * Math.max(0, newest - oldest - length))
  return { start, end: start + length }
}

const windowQuery = (window: Window) =>
  `start_time_utc=${encodeURIComponent(iso(window.start))}&end_time_utc=${encodeURIComponent(iso(window.end))}`

const get = (path: string, token?: string): autocannon.Request => ({
  method: 'GET',
  path,
  ...(token === undefined ? {} : { headers: { authorization: token } })
})

/** GET with a path chosen per request: autocannon rebuilds the request before each send. */
const getEach = (makePath: () => string, token: string): autocannon.Request => ({
  method: 'GET',
  headers: { authorization: token },
  setupRequest: (req) => ({ ...req, path: makePath() })
})

/**
 * The scenarios in the order each round runs them. Connection counts: 50 where the question is
 * throughput (verify against the bare route), 10 for the latency targets (a client pool's size, and
 * on 2 cores shared with the load generator more would only queue), 4 for the heavy answers (30 days
 * of callbacks, scrypt logins) whose cost per request is the point.
 */
export function scenarios(context: ScenarioContext): Scenario[] {
  const { token, oldest, newest } = context
  const once = (request: autocannon.Request) => () => ({ requests: [request] })
  return [
    {
      id: 'bare',
      title: 'bare Fastify route (ceiling)',
      server: 'bare',
      connections: 50,
      expectedStatus: 200,
      prepare: once(get('/auth/verify', token))
    },
    {
      id: 'verify',
      title: 'GET /auth/verify, valid token',
      server: 'service',
      connections: 50,
      expectedStatus: 200,
      prepare: once(get('/auth/verify', token))
    },
    {
      // The same requests to two workers: what a second process buys where the load generator
      // takes its share of the same cores (see the CPU column of the report).
      id: 'verify-2-workers',
      title: 'GET /auth/verify, valid token, WORKERS=2',
      server: 'workers',
      connections: 50,
      expectedStatus: 200,
      prepare: once(get('/auth/verify', token))
    },
    {
      id: 'verify-expired',
      title: 'GET /auth/verify, expired token (401)',
      server: 'service',
      connections: 50,
      expectedStatus: 401,
      prepare: once(get('/auth/verify', context.expiredToken))
    },
    {
      id: 'event-status',
      probeSingleConnection: true,
      title: 'GET event-status, random event',
      server: 'service',
      connections: 10,
      expectedStatus: 200,
      prepare: () => ({
        requests: [
          getEach(() => `/v1/event-tracer/event-status/${1 + Math.floor(Math.random() * context.eventCount)}`, token)
        ]
      })
    },
    {
      id: 'callbacks-1d',
      probeSingleConnection: true,
      title: 'GET baseband-callbacks, 1 day',
      server: 'service',
      connections: 10,
      expectedStatus: 200,
      prepare: () => ({
        requests: [
          getEach(() => `/v1/event-tracer/baseband-callbacks?${windowQuery(randomWindow(oldest, newest, DAY_MS))}`, token)
        ]
      })
    },
    {
      id: 'callbacks-30d',
      title: 'GET baseband-callbacks, 30 days',
      server: 'service',
      connections: 4,
      expectedStatus: 200,
      prepare: () => ({
        requests: [
          getEach(() => `/v1/event-tracer/baseband-callbacks?${windowQuery(randomWindow(oldest, newest, 30 * DAY_MS))}`, token)
        ]
      })
    },
    {
      id: 'events-page1',
      probeSingleConnection: true,
      title: 'GET /v1/events, page 1 (100 a page)',
      server: 'service',
      connections: 10,
      expectedStatus: 200,
      prepare: once(get(`/v1/events?${windowQuery(context.eventsWindow)}&limit=100`, token))
    },
    {
      id: 'events-page500',
      probeSingleConnection: true,
      title: 'GET /v1/events, page 500 (cursor)',
      server: 'service',
      connections: 10,
      expectedStatus: 200,
      prepare: once(get(`/v1/events?cursor=${context.page500Cursor}&limit=100`, token))
    },
    {
      // The same events as callbacks-1d, each held against its datatrail, heartbeats and deadlines.
      id: 'audit-1d',
      probeSingleConnection: true,
      title: 'GET audit, 1 day',
      server: 'service',
      connections: 10,
      expectedStatus: 200,
      prepare: () => ({
        requests: [getEach(() => `/v1/event-tracer/audit?${windowQuery(randomWindow(oldest, newest, DAY_MS))}`, token)]
      })
    },
    {
      id: 'update-trace',
      title: 'POST update-trace, distinct keys',
      server: 'service',
      connections: 20,
      expectedStatus: 200,
      prepare: () => context.updateTrace(token)
    },
    {
      id: 'login',
      title: 'POST /auth (scrypt)',
      server: 'service',
      connections: 4,
      expectedStatus: 200,
      prepare: once({
        method: 'POST',
        path: '/auth',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: context.username, password: context.password })
      })
    }
  ]
}

/**
 * The cursor of page 500 of `window` (newest first, 100 a page), found by walking 499 pages as a
 * client would. A cursor is the service's own opaque format, so the bench does not forge one; and
 * the walk is cheap (499 small requests, about a second), so asking for "the right window" instead
 * would save little and would measure a first page, not a deep one.
 */
export async function page500Cursor(url: string, token: string, window: Window): Promise<string> {
  let path = `/v1/events?${windowQuery(window)}&limit=100`
  for (let page = 1; page < 500; page++) {
    const response = await fetch(url + path, { headers: { authorization: token } })
    const body = (await response.json()) as { next_cursor?: string | null }
    if (!response.ok || typeof body.next_cursor !== 'string') {
      throw new Error(`page ${page} of /v1/events has no next_cursor (status ${response.status}): the window holds too few events`)
    }
    path = `/v1/events?cursor=${body.next_cursor}&limit=100`
  }
  return new URL(url + path).searchParams.get('cursor')!
}

/** The list window: the newest 365 days of the seeded range (MAX_WINDOW_DAYS is 366). */
export function eventsWindow(newest: number): Window {
  const end = newest + 1000
  return { start: end - 365 * DAY_MS, end }
}
