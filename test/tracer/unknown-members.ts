import t from 'tap'
import { event, get, post, tracerApp } from './fixtures.js'

const member = { registered: true, should_be_at_minoc: false, larger_dataset: {}, data_path: '/d', num_files: 1, missing_files: [] }
const heartbeat = {
  event_no: 1,
  heartbeat_id: 1,
  site: 'kko',
  sent: { trigger_time: '2024-05-01T10:00:05Z', error: null },
  received: { total_data_files: 1, dir_size_gb: 1, finished_time: null, heartbeat_sent_unix_s: 1714557605 }
}
const record = event(1, '2024-05-01T10:00:00Z')

/** A body with one unknown member, and the reason that must name it. */
type Case = [method: 'POST' | 'PUT', url: string, payload: unknown, reason: string]

const cases: Case[] = [
  ['POST', '/v1/events', [record, { ...record, event_no: 2, stauts: 'x' }], 'body[1].stauts is not allowed'],
  ['POST', '/v1/events', [{ ...record, actions: { want: { Baseband: true }, got: {} } }], 'body[0].actions.want.Baseband is not allowed'],
  ['POST', '/v1/events', [{ ...record, actions: { want: {}, got: { kko: true } } }], 'body[0].actions.got.kko is not allowed'],
  ['POST', '/v1/events', [{ ...record, actions: { want: {}, got: {}, done: {} } }], 'body[0].actions.done is not allowed'],
  ['POST', '/v1/event-tracer/create-trace', { event: 1, site: 'kko', stage: 'x' }, 'body.stage is not allowed'],
  ['POST', '/v1/event-tracer/update-trace', { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete', stauts: 'x' }, 'body.stauts is not allowed'],
  ['PUT', '/v1/event-tracer/datatrail/1/kko_baseband', { ...member, registred: true }, 'body.registred is not allowed'],
  ['PUT', '/v1/event-tracer/datatrail/1/kko_baseband', { ...member, larger_dataset: { nmae: 'x' } }, 'body.larger_dataset.nmae is not allowed'],
  ['POST', '/v1/event-tracer/heartbeats', [heartbeat, { ...heartbeat, heartbeat_id: 2, note: 'x' }], 'body[1].note is not allowed'],
  ['POST', '/v1/event-tracer/heartbeats', [{ ...heartbeat, sent: { ...heartbeat.sent, retries: 2 } }], 'body[0].sent.retries is not allowed'],
  ['POST', '/v1/event-tracer/heartbeats', [{ ...heartbeat, received: { ...heartbeat.received, files: [] } }], 'body[0].received.files is not allowed']
]

t.test('an unknown body member at any depth is 400 naming it, and nothing is written', async (t) => {
  const { app, writer } = await tracerApp(t)
  for (const [method, url, payload, reason] of cases) {
    const response = await post(app, url, writer, payload, method)
    t.equal(response.statusCode, 400, reason)
    t.strictSame(response.json(), { reasons: [reason], exception: 'BadRequest' }, reason)
  }
  const parts = await app.store.views.eventParts(1)
  t.strictSame([await app.store.events.find(1), parts.trace, parts.datatrail, parts.heartbeats], [null, null, [], []])
})

t.test('NDJSON records are held to the same schema', async (t) => {
  const { app, writer } = await tracerApp(t)
  const lines = [record, { ...record, event_no: 2, actions: { want: { Baseband: true }, got: {} } }]
  const response = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: { authorization: writer, 'content-type': 'application/x-ndjson' },
    payload: lines.map((line) => JSON.stringify(line)).join('\n')
  })
  t.equal(response.statusCode, 400)
  t.strictSame(response.json(), { reasons: ['body[1].actions.want.Baseband is not allowed'], exception: 'BadRequest' })
  t.equal(await app.store.events.find(1), null)
})

t.test('a body of a media type no route reads is 415 and never reaches the handler, even when it holds valid JSON', async (t) => {
  const { app, writer } = await tracerApp(t)
  for (const [type, payload] of [['text/plain', 'hello'], ['text/plain', JSON.stringify([record])]]) {
    const response = await app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: writer, 'content-type': type }, payload })
    t.equal(response.statusCode, 415, `${type} ${payload}`)
    t.strictSame(response.json(), { reasons: ['Unsupported Content-Type; send application/json.'], exception: 'UnsupportedMediaType' })
  }
  t.equal(await app.store.events.find(1), null, 'nothing written')
  const empty = await app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: writer } })
  t.equal(empty.statusCode, 400, 'no body at all')
})

t.test('unknown query parameters are ignored', async (t) => {
  const { app, reader } = await tracerApp(t)
  const window = 'start_time_utc=2024-05-01&end_time_utc=2024-05-02'
  for (const url of [`/v1/events?${window}&stauts=x`, `/v1/event-tracer/baseband-callbacks?${window}&limit=5&x=1`]) {
    t.equal((await get(app, url, reader)).statusCode, 200, url)
  }
})
