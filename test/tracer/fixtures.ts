import type { LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import type { EventInput } from '../../schemas/events.js'
import type { ConfigInput } from '../../src/config.js'
import { toEventRecord } from '../../src/domain/events.js'
import { build, userWithTokens, type App, type BuildOptions } from '../helper.js'

/**
 * An app with a writer and a reader logged in. Tests move the app's clock by hours and days, and
 * tokens live by that clock: these are issued for a year unless `env` says otherwise.
 */
export async function tracerApp(t: Test, env: ConfigInput = {}, options: BuildOptions = {}) {
  const app = await build(t, { ACCESS_TOKEN_TTL: String(365 * 86_400), ...env }, options)
  const writer = (await userWithTokens(app, 'pipeline', 'writer')).access_token
  const reader = (await userWithTokens(app, 'operator', 'reader')).access_token
  return { app, writer, reader }
}

/** Stores events directly, as the pipeline's POST /v1/events would. */
export async function putEvents(app: App, events: EventInput[]) {
  const now = Date.now() / 1000
  await app.store.events.upsert(events.map((event) => toEventRecord(event, app.config.TRACER_SITES, now)))
}

/** An event record with defaults for what a test does not care about. */
export const event = (event_no: number, timestamp_utc: string, overrides: Partial<EventInput> = {}): EventInput => ({
  event_no,
  timestamp_utc,
  snr: 10,
  known_source_name: 'EXT',
  actions: { want: { baseband: true }, got: {} },
  ...overrides
})

export const get = (app: App, url: string, token: string) => app.inject({ url, headers: { authorization: token } })

export const post = (app: App, url: string, token: string, payload: unknown, method: 'POST' | 'PUT' = 'POST') =>
  app.inject({ method, url, headers: { authorization: token }, payload: payload as object })

/** A 503 that asks the client to come back: Retry-After 2 and the JSON envelope with the one `reason`. */
export function assertRetryLater(t: Test, response: LightMyRequestResponse, reason: string | RegExp, label = 'the 503 of a full instance') {
  t.equal(response.statusCode, 503, label)
  t.equal(response.headers['retry-after'], '2')
  t.match(response.headers['content-type'], /^application\/json/)
  if (typeof reason === 'string') t.strictSame(response.json(), { reasons: [reason], exception: 'ServiceUnavailable' })
  else t.match(response.json(), { reasons: [reason], exception: 'ServiceUnavailable' })
}
