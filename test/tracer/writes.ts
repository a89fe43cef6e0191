import t from 'tap'
import { event, get, post, tracerApp } from './fixtures.js'

const member = {
  registered: true,
  should_be_at_minoc: false,
  larger_dataset: {},
  data_path: '/data/x',
  num_files: 1,
  missing_files: []
}
const heartbeat = (heartbeat_id: number, total_data_files = 10) => ({
  event_no: 1,
  heartbeat_id,
  site: 'chime',
  sent: { trigger_time: '2024-05-01T10:00:05Z', error: 'disk full' },
  received: { total_data_files, dir_size_gb: 1, finished_time: null, heartbeat_sent_unix_s: 1714557605 }
})

/** Every write route, with a valid body. */
const writes = [
  ['POST', '/v1/event-tracer/create-trace', { event: 1, site: 'chime' }],
  ['POST', '/v1/event-tracer/update-trace', { event: 1, site: 'kko', stage: 'data_registration', status: 'complete' }],
  ['PUT', '/v1/event-tracer/datatrail/1/intensity', member],
  ['POST', '/v1/event-tracer/heartbeats', [heartbeat(1)]],
  ['POST', '/v1/events', [event(1, '2024-05-01T10:00:00Z')]]
] as const

t.test('a reader gets 403 Forbidden on every write route, whatever the body', async (t) => {
  const { app, reader } = await tracerApp(t)
  for (const [method, url, body] of writes) {
    for (const payload of [body, {}, 'not json']) {
      const response = await post(app, url, reader, payload, method)
      t.equal(response.statusCode, 403, `${method} ${url}`)
      t.equal(response.json().exception, 'Forbidden')
    }
  }
  t.equal((await app.store.traces.find(1)), null, 'nothing was written')
})

t.test('a writer gets {"status": true} (or the upsert count) from every write route; no token is 401', async (t) => {
  const { app, writer } = await tracerApp(t)
  for (const [method, url, body] of writes) {
    const response = await post(app, url, writer, body, method)
    t.equal(response.statusCode, 200, `${method} ${url}`)
    t.strictSame(response.json(), url === '/v1/events' ? { upserted: 1 } : { status: true })
    const anonymous = await app.inject({ method, url, payload: body as object })
    t.equal(anonymous.statusCode, 401)
  }
})

t.test('create-trace makes every key incomplete and is harmless the second time', async (t) => {
  const { app, writer } = await tracerApp(t)
  await post(app, '/v1/event-tracer/create-trace', writer, { event: 5, site: 'gbo' })
  const created = await app.store.traces.find(5)
  t.equal(created?.['stages/tsar_classification'], 'incomplete')
  t.equal(created?.['stages/data_replication_to_minoc/sites/hco'], 'incomplete')
  t.equal(Object.keys(created ?? {}).filter((key) => key.startsWith('stages/')).length, 17)
  t.type(created?.create_timestamp, 'number')

  await post(app, '/v1/event-tracer/update-trace', writer, { event: 5, site: 'gbo', stage: 'baseband_conversion', status: 'complete' })
  const again = await post(app, '/v1/event-tracer/create-trace', writer, { event: 5, site: 'gbo' })
  t.strictSame(again.json(), { status: true })
  t.equal((await app.store.traces.find(5))?.['stages/baseband_conversion/sites/gbo'], 'complete', 'nothing was reset')

  const unknownSite = await post(app, '/v1/event-tracer/create-trace', writer, { event: 5, site: 'mars' })
  t.equal(unknownSite.statusCode, 400)
})

t.test('update-trace sets one key, bumps update_timestamp, creates a missing trace', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const before = Date.now() / 1000
  await post(app, '/v1/event-tracer/update-trace', writer, { event: 9, site: 'hco', stage: 'data_registration', status: 'complete' })
  const trace = await app.store.traces.find(9)
  t.equal(trace?.['stages/data_registration/sites/hco'], 'complete')
  t.equal(trace?.['stages/data_registration/sites/kko'], 'incomplete', 'the rest created incomplete')
  const firstUpdate = trace?.update_timestamp as number
  t.ok(firstUpdate >= before)

  await post(app, '/v1/event-tracer/update-trace', writer, { event: 9, site: 'hco', stage: 'data_registration', status: 'incomplete' })
  const reverted = await app.store.traces.find(9)
  t.equal(reverted?.['stages/data_registration/sites/hco'], 'incomplete', 'a status can go back')
  t.ok((reverted?.update_timestamp as number) >= firstUpdate)

  const status = (await get(app, '/v1/event-tracer/event-status/9', reader)).json()
  t.equal(status.trace.update_timestamp, reverted?.update_timestamp)
})

t.test('stage tsar_classification ignores the site', async (t) => {
  const { app, writer } = await tracerApp(t)
  for (const site of ['kko', 'anywhere']) {
    const response = await post(app, '/v1/event-tracer/update-trace', writer, { event: 3, site, stage: 'tsar_classification', status: 'complete' })
    t.equal(response.statusCode, 200, site)
  }
  const trace = await app.store.traces.find(3)
  t.equal(trace?.['stages/tsar_classification'], 'complete')
  t.notOk(Object.keys(trace ?? {}).some((key) => key.includes('tsar_classification/sites')))
})

t.test('unknown site, stage or status, and malformed events, are 400', async (t) => {
  const { app, writer } = await tracerApp(t)
  const valid = { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete' }
  const cases: [object, RegExp][] = [
    [{ ...valid, site: 'mars' }, /^body\.site must be one of chime, kko, gbo, hco$/],
    [{ ...valid, stage: 'teleportation' }, /^body\.stage /],
    [{ ...valid, status: 'NOT_REQUIRED' }, /^body\.status must be one of complete, incomplete, not_required$/],
    [{ ...valid, status: 'not required' }, /^body\.status /],
    [{ ...valid, status: 'done' }, /^body\.status /],
    [{ ...valid, event: -1 }, /^body\.event /],
    [{ ...valid, event: 1.5 }, /^body\.event /],
    [{ ...valid, event: '12' }, /^body\.event /],
    [{ ...valid, event: 2 ** 53 }, /^body\.event /],
    [{ site: 'kko', stage: 'baseband_conversion', status: 'complete' }, /^body\.event is required$/]
  ]
  for (const [payload, reason] of cases) {
    const response = await post(app, '/v1/event-tracer/update-trace', writer, payload)
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.match(response.json(), { exception: 'BadRequest', reasons: [reason] }, JSON.stringify(payload))
  }
})

t.test('200 parallel update-trace calls on different keys of one event lose none', async (t) => {
  // 50 sites × 4 stages: 200 distinct keys.
  const sites = Array.from({ length: 50 }, (_, i) => `site${i}`)
  const { app, writer } = await tracerApp(t, { TRACER_SITES: sites.join(',') })
  const stages = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']
  const updates = sites.flatMap((site) => stages.map((stage) => ({ event: 42, site, stage, status: 'complete' })))
  t.equal(updates.length, 200)
  const responses = await Promise.all(updates.map((update) => post(app, '/v1/event-tracer/update-trace', writer, update)))
  t.ok(responses.every((response) => response.statusCode === 200))
  const trace = await app.store.traces.find(42)
  const complete = Object.entries(trace ?? {}).filter(([key, value]) => key.includes('/sites/') && value === 'complete')
  t.equal(complete.length, 200, 'every key is complete')
})

t.test('datatrail members are replaced whole; the member name is checked', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  await post(app, '/v1/event-tracer/datatrail/8/gbo_baseband', writer, { ...member, num_files: 5 }, 'PUT')
  await post(app, '/v1/event-tracer/datatrail/8/gbo_baseband', writer, { ...member, missing_files: ['/a'] }, 'PUT')
  const status = (await get(app, '/v1/event-tracer/event-status/8', reader)).json()
  t.strictSame(status.datatrail.gbo_baseband, { ...member, missing_files: ['/a'] })

  const unknownMember = await post(app, '/v1/event-tracer/datatrail/8/chime_baseband', writer, member, 'PUT')
  t.equal(unknownMember.statusCode, 400, 'the primary site’s member is plain baseband')
  const { missing_files: _, ...incomplete } = member
  const missingField = await post(app, '/v1/event-tracer/datatrail/8/baseband', writer, incomplete, 'PUT')
  t.equal(missingField.statusCode, 400)
  t.match(missingField.json().reasons, [/^body\.missing_files is required$/])
})

t.test('heartbeats: a repeated heartbeat_id is an idempotent no-op', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  t.strictSame((await post(app, '/v1/event-tracer/heartbeats', writer, [heartbeat(1, 10), heartbeat(2, 20)])).json(), { status: true })
  t.strictSame((await post(app, '/v1/event-tracer/heartbeats', writer, [heartbeat(1, 99)])).json(), { status: true })
  const status = (await get(app, '/v1/event-tracer/event-status/1', reader)).json()
  t.strictSame(
    status.heartbeats.map((h: { heartbeat_id: number; received: { total_data_files: number } }) => [h.heartbeat_id, h.received.total_data_files]),
    [[1, 10], [2, 20]]
  )
  const bad = await post(app, '/v1/event-tracer/heartbeats', writer, [{ ...heartbeat(3), site: 'mars' }])
  t.equal(bad.statusCode, 400)
  t.match(bad.json().reasons, [/^body\[0\]\.site /])
  t.equal((await post(app, '/v1/event-tracer/heartbeats', writer, [])).statusCode, 400, 'an empty batch')
})

t.test('every write stores the time of the app’s clock, in seconds', async (t) => {
  const now = Date.parse('2031-07-04T08:00:00.250Z')
  const { app, writer } = await tracerApp(t, {}, { now: () => now })
  for (const [method, url, body] of writes) t.equal((await post(app, url, writer, body, method)).statusCode, 200, url)
  const seconds = now / 1000
  t.match(await app.store.traces.find(1), { create_timestamp: seconds, update_timestamp: seconds })
  t.match(await app.store.traces.history(1), [{ at: seconds }])
  t.equal((await app.store.events.find(1))?.update_timestamp, seconds)
  const parts = await app.store.views.eventParts(1)
  t.strictSame(parts.datatrail.map((item) => item.update_timestamp), [seconds])
  t.strictSame(parts.heartbeats.map((item) => item.update_timestamp), [seconds])
})
