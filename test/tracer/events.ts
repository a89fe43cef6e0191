import t from 'tap'
import { event, get, post, putEvents, tracerApp } from './fixtures.js'

const HOUR = 3_600_000
const base = Date.parse('2024-05-01T00:00:00Z')
const at = (hours: number) => new Date(base + hours * HOUR).toISOString()
const ids = (body: { events: { event_no: number }[] }) => body.events.map((e) => e.event_no)
const window = 'start_time_utc=2024-05-01&end_time_utc=2024-06-01'

t.test('POST /v1/events upserts a JSON array in one go', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const response = await post(app, '/v1/events', writer, [
    event(1, '2024-05-01T10:00:00Z', { dm: 349.5, tsar_classification: 'astrophysical' }),
    event(2, '2024-05-01T11:00:00+01:00', { actions: undefined })
  ])
  t.equal(response.statusCode, 200)
  t.strictSame(response.json(), { upserted: 2 })
  t.strictSame((await get(app, '/v1/events/1', reader)).json(), {
    event_no: 1,
    timestamp_utc: '2024-05-01T10:00:00.000Z',
    snr: 10,
    dm: 349.5,
    known_source_name: 'EXT',
    tsar_classification: 'astrophysical',
    actions: { want: { baseband: true }, got: {} }
  })
  t.match((await get(app, '/v1/events/2', reader)).json(), {
    timestamp_utc: '2024-05-01T10:00:00.000Z',
    dm: null,
    tsar_classification: 'unclassified',
    actions: { want: {}, got: {} }
  })

  await post(app, '/v1/events', writer, [event(1, '2024-05-02T00:00:00Z', { snr: 99 })])
  t.match((await get(app, '/v1/events/1', reader)).json(), { snr: 99, timestamp_utc: '2024-05-02T00:00:00.000Z', dm: null }, 'replaced whole')
})

t.test("event times in Python's datetime form are read; offsets beyond 23:59 are refused", async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const response = await post(app, '/v1/events', writer, [
    event(1, '2026-11-22 11:02:43.430774'),
    event(2, '2026-11-22 11:02:43.430774-23:59')
  ])
  t.equal(response.statusCode, 200, response.body)
  t.equal((await get(app, '/v1/events/1', reader)).json().timestamp_utc, '2026-11-22T11:02:43.430Z')
  t.equal((await get(app, '/v1/events/2', reader)).json().timestamp_utc, '2026-11-23T11:01:43.430Z')
  for (const timestamp of ['2026-11-22 11:02:43+24:00', '2026-11-22T11:02:43-02:60']) {
    const refused = await post(app, '/v1/events', writer, [event(3, timestamp)])
    t.equal(refused.statusCode, 400, timestamp)
    t.match(refused.json(), { exception: 'BadRequest', reasons: [/^body\[0\]\.timestamp_utc /] }, timestamp)
  }
})

t.test('an event time is stored only when it reads back as the same instant: years 0000 to 9999 in UTC', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const accepted = await post(app, '/v1/events', writer, [event(1, '0042-03-04T05:06:07Z'), event(2, '9999-12-31T23:59:59.999+23:59')])
  t.equal(accepted.statusCode, 200, accepted.body)
  t.equal((await get(app, '/v1/events/1', reader)).json().timestamp_utc, '0042-03-04T05:06:07.000Z')
  t.equal((await get(app, '/v1/events/2', reader)).json().timestamp_utc, '9999-12-31T00:00:59.999Z')
  const refused = await post(app, '/v1/events', writer, [event(3, '9999-12-31T23:59:59.999-23:59')])
  t.equal(refused.statusCode, 400)
  t.strictSame(refused.json(), {
    exception: 'BadRequest',
    reasons: [
      'body[0].timestamp_utc names an instant outside the years 0000 to 9999 in UTC (+010000-01-01T23:58:59.999Z), ' +
        'which could not be written back as an RFC 3339 time (got "9999-12-31T23:59:59.999-23:59")'
    ]
  })
  t.equal((await get(app, '/v1/events/3', reader)).statusCode, 404, 'nothing stored')
  const window = await get(app, '/v1/event-tracer/baseband-callbacks?start_time_utc=9999-12-01&end_time_utc=9999-12-31T23:59-00:01', reader)
  t.equal(window.statusCode, 400)
  t.match(window.json(), { reasons: [/^query\.end_time_utc names an instant outside the years 0000 to 9999/] })
})

t.test('POST /v1/events accepts NDJSON', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const body = [event(1, at(1)), event(2, at(2))].map((record) => JSON.stringify(record)).join('\n') + '\n\n'
  const response = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: { authorization: writer, 'content-type': 'application/x-ndjson' },
    payload: body
  })
  t.strictSame(response.json(), { upserted: 2 })
  t.equal((await get(app, '/v1/events/2', reader)).statusCode, 200)

  const broken = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: { authorization: writer, 'content-type': 'application/x-ndjson' },
    payload: `${JSON.stringify(event(3, at(3)))}\n{"event_no": 4,`
  })
  t.equal(broken.statusCode, 400)
  t.strictSame(broken.json(), { reasons: ['body line 2 is not valid JSON'], exception: 'BadRequest' })
})

t.test('one bad record refuses the whole batch, naming its index', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const cases: [unknown, RegExp][] = [
    [[event(1, at(1)), { ...event(2, at(2)), snr: 'high' }], /^body\[1\]\.snr /],
    [[event(1, at(1)), event(2, '2024-02-30')], /^body\[1\]\.timestamp_utc /],
    [[event(1, at(1)), { ...event(2, at(2)), known_source_name: undefined }], /^body\[1\]\.known_source_name is required$/],
    [[{ ...event(1, at(1)), event_no: -5 }], /^body\[0\]\.event_no /],
    [[], /^body /],
    [Array.from({ length: 1001 }, (_, i) => event(i, at(1))), /^body /]
  ]
  for (const [payload, reason] of cases) {
    const response = await post(app, '/v1/events', writer, payload)
    t.equal(response.statusCode, 400)
    t.match(response.json(), { exception: 'BadRequest', reasons: [reason] })
  }
  t.equal((await get(app, '/v1/events/1', reader)).statusCode, 404, 'nothing of a refused batch is stored')
})

t.test('GET /v1/events/{event_no}: 404 when unknown, 400 when malformed', async (t) => {
  const { app, reader } = await tracerApp(t)
  t.equal((await get(app, '/v1/events/5', reader)).statusCode, 404)
  t.equal((await get(app, '/v1/events/-5', reader)).statusCode, 400)
  t.equal((await get(app, '/v1/events/1e3', reader)).statusCode, 400)
})

t.test('the list: newest first by default, ascending on request, ties by event_no', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [event(3, at(2)), event(1, at(1)), event(2, at(2)), event(4, at(31 * 24))])
  const desc = (await get(app, `/v1/events?${window}`, reader)).json()
  t.strictSame(ids(desc), [3, 2, 1], 'event 4 is outside the window')
  t.equal(desc.next_cursor, null)
  t.strictSame(ids((await get(app, `/v1/events?${window}&order=asc`, reader)).json()), [1, 2, 3])
  t.equal((await get(app, `/v1/events?${window}&order=sideways`, reader)).statusCode, 400)
})

t.test('filters: snr range, known source, baseband requested', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [
    event(1, at(1), { snr: 8, known_source_name: 'B0329+54' }),
    event(2, at(2), { snr: 12, known_source_name: 'B0531+21', actions: { want: { intensity: true }, got: {} } }),
    event(3, at(3), { snr: 50, known_source_name: 'B0329+54', actions: { want: { gbo_baseband: true }, got: {} } })
  ])
  const list = async (query: string) => ids((await get(app, `/v1/events?${window}&order=asc&${query}`, reader)).json())
  t.strictSame(await list('min_snr=10'), [2, 3])
  t.strictSame(await list('max_snr=12'), [1, 2])
  t.strictSame(await list('min_snr=9&max_snr=13'), [2])
  t.strictSame(await list('known_source_name=B0329%2B54'), [1, 3])
  t.strictSame(await list('baseband_requested=true'), [1, 3])
  t.strictSame(await list('baseband_requested=false'), [2])
  t.strictSame(await list('baseband_requested=true&known_source_name=B0329%2B54&min_snr=20'), [3])
})

t.test('page 50 holds the right records, in both orders', async (t) => {
  const { app, reader } = await tracerApp(t)
  // 600 events, several sharing a timestamp, so the order within equal times matters too.
  await putEvents(app, Array.from({ length: 600 }, (_, i) => event(i, new Date(base + Math.floor(i / 3) * 60_000).toISOString())))
  for (const order of ['asc', 'desc'] as const) {
    const url = `/v1/events?${window}&limit=10&order=${order}`
    let page = (await get(app, url, reader)).json()
    for (let n = 2; n <= 50; n++) {
      page = (await get(app, `/v1/events?cursor=${page.next_cursor}&limit=10`, reader)).json()
    }
    const expected = Array.from({ length: 10 }, (_, i) => (order === 'asc' ? 490 + i : 109 - i))
    t.strictSame(ids(page), expected, `page 50 ${order}`)
  }
})

t.test('following next_cursor visits every event once; the last page says null', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, Array.from({ length: 25 }, (_, i) => event(i, at(i))))
  const seen: number[] = []
  let url = `/v1/events?${window}&limit=7&order=asc&min_snr=0`
  for (;;) {
    const page = (await get(app, url, reader)).json()
    seen.push(...ids(page))
    if (page.next_cursor === null) break
    url = `/v1/events?limit=7&cursor=${page.next_cursor}`
  }
  t.strictSame(seen, Array.from({ length: 25 }, (_, i) => i))
})

t.test('a cursor whose position lies outside its own window is 400, not events from outside it', async (t) => {
  const { app, reader } = await tracerApp(t)
  // Events on 30 April, 1 May (the window) and 1 June.
  await putEvents(app, [event(1, at(-12)), event(2, at(1)), event(3, at(2)), event(4, at(3)), event(5, at(31 * 24 + 1))])
  const pages = { asc: '', desc: '' }
  for (const order of ['asc', 'desc'] as const) {
    pages[order] = (await get(app, `/v1/events?${window}&limit=1&order=${order}`, reader)).json().next_cursor
    t.equal((await get(app, `/v1/events?cursor=${pages[order]}`, reader)).statusCode, 200, `the real ${order} cursor`)
  }
  const tampered = (cursor: string, timestamp: number) => {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString())
    return Buffer.from(JSON.stringify({ ...decoded, after: { ...decoded.after, timestamp } })).toString('base64url')
  }
  const start = Date.parse('2024-05-01T00:00:00Z')
  const end = Date.parse('2024-06-01T00:00:00Z')
  const cases: [string, string][] = [
    ['asc, before the window', tampered(pages.asc, start - 86_400_000)],
    ['asc, one ms before the window', tampered(pages.asc, start - 1)],
    ['asc, at the excluded end', tampered(pages.asc, end)],
    ['desc, after the window', tampered(pages.desc, end + 86_400_000)],
    ['desc, at the excluded end', tampered(pages.desc, end)],
    ['desc, before the window', tampered(pages.desc, start - 1)]
  ]
  for (const [name, cursor] of cases) {
    const response = await get(app, `/v1/events?cursor=${cursor}`, reader)
    t.equal(response.statusCode, 400, `${name}: ${response.body.slice(0, 80)}`)
    t.match(response.json(), { exception: 'BadRequest', reasons: [/^query\.cursor /] }, name)
  }
  const atStart = await get(app, `/v1/events?cursor=${tampered(pages.asc, start)}`, reader)
  t.equal(atStart.statusCode, 200, 'a position at the window start is inside it')
})

t.test('without bounds the list covers the last 7 days', async (t) => {
  const { app, reader } = await tracerApp(t)
  const now = Date.now()
  await putEvents(app, [
    event(1, new Date(now - 60_000).toISOString()),
    event(2, new Date(now - 6 * 86_400_000).toISOString()),
    event(3, new Date(now - 8 * 86_400_000).toISOString())
  ])
  t.strictSame(ids((await get(app, '/v1/events', reader)).json()), [1, 2])
})

t.test('bad list parameters are 400 naming them', async (t) => {
  const { app, reader } = await tracerApp(t)
  const cases: [string, RegExp][] = [
    ['limit=0', /^query\.limit /],
    ['limit=1001', /^query\.limit /],
    ['min_snr=loud', /^query\.min_snr /],
    ['baseband_requested=maybe', /^query\.baseband_requested /],
    ['start_time_utc=2024-02-30', /^query\.start_time_utc /],
    ['cursor=not-a-cursor', /^query\.cursor /],
    [`cursor=${Buffer.from('{"window":{"start":0,"end":1}}').toString('base64url')}`, /^query\.cursor /]
  ]
  for (const [query, reason] of cases) {
    const response = await get(app, `/v1/events?${query}`, reader)
    t.equal(response.statusCode, 400, query)
    t.match(response.json(), { exception: 'BadRequest', reasons: [reason] }, query)
  }
})
