import t from 'tap'
import { event, get, putEvents, tracerApp } from './fixtures.js'

const url = (start: string, end: string) =>
  `/v1/event-tracer/baseband-callbacks?start_time_utc=${encodeURIComponent(start)}&end_time_utc=${encodeURIComponent(end)}`

t.test('the window is half-open: an event exactly at start is in, one exactly at end is out', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [
    event(1, '2024-05-01T00:00:00Z'),
    event(2, '2024-05-01T23:59:59.999Z'),
    event(3, '2024-05-02T00:00:00Z'),
    event(4, '2024-04-30T23:59:59.999Z')
  ])
  const response = await get(app, url('2024-05-01', '2024-05-02'), reader)
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/json/)
  t.strictSame(
    response.json().map((record: { event_no: number }) => record.event_no),
    [1, 2]
  )
})

t.test('date-times with offsets and without a zone', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [event(1, '2024-05-01T10:00:00Z'), event(2, '2024-05-01T12:00:00Z')])
  const ids = async (start: string, end: string) =>
    (await get(app, url(start, end), reader)).json().map((record: { event_no: number }) => record.event_no)
  t.strictSame(await ids('2024-05-01T11:00+02:00', '2024-05-01T13:00+02:00'), [1], '09:00Z to 11:00Z')
  t.strictSame(await ids('2024-05-01T10:00:00', '2024-05-01T12:00:00'), [1], 'no zone reads as UTC')
  t.strictSame(await ids('2024-05-01T10:00:00.001Z', '2024-05-01T12:00:00.001Z'), [2], 'milliseconds count')
})

t.test("Python's datetime text: a space for T, sent as %20 or +; offsets beyond 23:59 are 400", async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [event(1, '2024-05-01T10:00:00Z'), event(2, '2024-05-01T12:00:00Z')])
  const window = (start: string, end: string) => `/v1/event-tracer/baseband-callbacks?start_time_utc=${start}&end_time_utc=${end}`
  for (const space of ['%20', '+']) {
    const response = await get(app, window(`2024-05-01${space}09:00:00.430774`, `2024-05-01${space}11:00:00.000001%2B00:00`), reader)
    t.equal(response.statusCode, 200, space)
    t.strictSame(response.json().map((record: { event_no: number }) => record.event_no), [1], space)
  }
  for (const [start, end, field] of [
    ['2024-05-01T09:00%2B24:00', '2024-05-02', 'start_time_utc'],
    ['2024-05-01', '2024-05-01%2012:00-00:60', 'end_time_utc']
  ] as const) {
    const response = await get(app, window(start, end), reader)
    t.equal(response.statusCode, 400, `${start} ${end}`)
    t.match(response.json(), { exception: 'BadRequest', reasons: [new RegExp(`^query\\.${field} `)] })
  }
})

t.test('only events whose actions ask for baseband data, ascending by time then event_no', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [
    event(30, '2024-05-01T03:00:00Z', { actions: { want: { kko_baseband: true }, got: {} } }),
    event(20, '2024-05-01T02:00:00Z'),
    event(10, '2024-05-01T02:00:00Z', { actions: { want: { hco_baseband: true, baseband: false }, got: {} } }),
    event(40, '2024-05-01T01:00:00Z', { actions: { want: { intensity: true, baseband: false }, got: {} } }),
    event(50, '2024-05-01T01:30:00Z', { actions: { want: {}, got: { baseband: true } } }),
    event(60, '2024-05-01T01:40:00Z', { actions: undefined })
  ])
  const records = (await get(app, url('2024-05-01', '2024-05-02'), reader)).json()
  t.strictSame(
    records.map((record: { event_no: number }) => record.event_no),
    [10, 20, 30],
    'equal times are ordered by event_no'
  )
})

t.test('each record: event_no, snr, known_source_name, timestamp_utc, and trace only when one exists', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [
    event(1, '2024-05-01T10:00:00Z', { snr: 42.5, known_source_name: 'B0329+54' }),
    event(2, '2024-05-01T11:00:00Z', { snr: 8.25, known_source_name: 'AMB' })
  ])
  await app.store.traces.upsert([
    { event_no: 1, 'stages/tsar_classification': 'complete', 'stages/baseband_conversion/sites/kko': 'not_required', update_timestamp: 1714557700.25, create_timestamp: 1, _id: 'x' }
  ])
  const [first, second] = (await get(app, url('2024-05-01', '2024-05-02'), reader)).json()
  t.match(first, { event_no: 1, snr: 42.5, known_source_name: 'B0329+54', timestamp_utc: '2024-05-01T10:00:00.000Z' })
  t.strictSame(second, { event_no: 2, snr: 8.25, known_source_name: 'AMB', timestamp_utc: '2024-05-01T11:00:00.000Z' }, 'no trace key at all')

  const trace = first.trace
  t.equal(trace.event_no, 1)
  t.equal(trace['stages/tsar_classification'], 'complete')
  t.equal(trace['stages/baseband_conversion/sites/kko'], 'complete', 'a stored not_required reads complete')
  t.equal(trace['stages/data_registration/sites/gbo'], 'incomplete', 'a missing key reads incomplete')
  t.equal(trace.update_timestamp, 1714557700.25)
  t.equal(Object.keys(trace).length, 1 + 1 + 16 + 1, 'event_no, classification, 4 stages × 4 sites, update_timestamp')
  t.notOk('_id' in trace || 'create_timestamp' in trace, 'other stored keys are not output')
  t.ok(Object.values(trace).every((value) => typeof value === 'number' || value === 'complete' || value === 'incomplete'))
})

t.test('the trace follows TRACER_SITES', async (t) => {
  const { app, reader } = await tracerApp(t, { TRACER_SITES: 'chime,kko' })
  await putEvents(app, [event(1, '2024-05-01T10:00:00Z')])
  await app.store.traces.upsert([{ event_no: 1 }])
  const [record] = (await get(app, url('2024-05-01', '2024-05-02'), reader)).json()
  t.strictSame(Object.keys(record.trace), [
    'event_no',
    'stages/tsar_classification',
    'stages/baseband_callback_request/sites/chime',
    'stages/baseband_callback_request/sites/kko',
    'stages/baseband_conversion/sites/chime',
    'stages/baseband_conversion/sites/kko',
    'stages/data_registration/sites/chime',
    'stages/data_registration/sites/kko',
    'stages/data_replication_to_minoc/sites/chime',
    'stages/data_replication_to_minoc/sites/kko',
    'update_timestamp'
  ])
})

t.test('a window of more events than one page streams as one JSON array', async (t) => {
  const { app, reader } = await tracerApp(t)
  const start = Date.parse('2024-05-01T00:00:00Z')
  await putEvents(
    app,
    Array.from({ length: 1234 }, (_, i) => event(i, new Date(start + i * 60_000).toISOString()))
  )
  await app.store.traces.upsert(Array.from({ length: 600 }, (_, i) => ({ event_no: i * 2 })))
  const records = (await get(app, url('2024-05-01', '2024-05-03'), reader)).json()
  t.equal(records.length, 1234)
  t.ok(records.every((record: { event_no: number }, i: number) => record.event_no === i), 'in order, none repeated')
  t.equal(records.filter((record: { trace?: unknown }) => record.trace !== undefined).length, 600)
})

t.test('an empty window is an empty array', async (t) => {
  const { app, reader } = await tracerApp(t)
  const response = await get(app, url('2024-05-01', '2024-05-02'), reader)
  t.equal(response.statusCode, 200)
  t.equal(response.body, '[]')
})

t.test('bad windows are 400 naming the parameter', async (t) => {
  const { app, reader } = await tracerApp(t)
  const cases: [string, RegExp][] = [
    [url('2024-02-30', '2024-03-02'), /^query\.start_time_utc /],
    [url('2024-03-01', '2024-03-01'), /^query\.end_time_utc /],
    [url('2024-03-02', '2024-03-01'), /^query\.end_time_utc /],
    [url('2023-01-01', '2024-03-01'), /^query\.end_time_utc is more than 366 days/],
    [url('01/03/2024', '2024-03-02'), /^query\.start_time_utc /],
    ['/v1/event-tracer/baseband-callbacks?end_time_utc=2024-03-01', /^query\.start_time_utc is required/],
    ['/v1/event-tracer/baseband-callbacks?start_time_utc=2024-03-01', /^query\.end_time_utc is required/]
  ]
  for (const [target, reason] of cases) {
    const response = await get(app, target, reader)
    t.equal(response.statusCode, 400, target)
    t.match(response.json(), { exception: 'BadRequest', reasons: [reason] }, target)
  }
})

t.test('unknown query parameters are ignored; a token is required', async (t) => {
  const { app, reader } = await tracerApp(t)
  t.equal((await get(app, url('2024-05-01', '2024-05-02') + '&verbose=1', reader)).statusCode, 200)
  const anonymous = await app.inject({ url: url('2024-05-01', '2024-05-02') })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.json().exception, 'Unauthorized')
})
