import { readFileSync } from 'node:fs'
import t from 'tap'
import { serviceUnavailable } from '../../src/app-error.js'
import { generateOpenApiYaml } from '../../src/openapi.js'
import { toEventRecord } from '../../src/domain/events.js'
import { addUser, build, expiredToken, userWithTokens } from '../helper.js'
import { connect } from 'node:net'
import { listen, parseRaw, rawRequest } from '../security/hostile.js'
import { call, callHead, checkConnectionRefusal, declared, exercised, prismTally } from './contract.js'
import { prismFor, sendThroughPrism, throughPrism } from './prism.js'
import { untilTrue } from '../raw-http.js'

const json = { 'content-type': 'application/json' }
const tooLarge = 'x'.repeat(2 * 1024 * 1024)
// Through Prism every request is made twice, the second time over loopback.
if (throughPrism) t.setTimeout(600_000)

t.test('openapi.yaml is what the code generates (run `npm run openapi` after changing a schema)', async (t) => {
  t.equal(readFileSync('openapi.yaml', 'utf8'), await generateOpenApiYaml())
})

t.test('real responses of every route and status match openapi.yaml', async (t) => {
  // Through Prism each request counts twice against the login limits: the throttled app below is where they are met.
  const app = await build(t, throughPrism ? { AUTH_RATE_LIMIT: '100', REFRESH_RATE_LIMIT: '100' } : {})
  await addUser(app, 'ana', 'pw')

  await call(t, app, { method: 'POST', url: '/auth', payload: { username: 'ana', password: 'pw' } })
  // The tokens of a login of their own: a login replaces the user's refresh token, and through
  // Prism the call above logs in twice.
  const { access_token, refresh_token } = (await app.inject({ method: 'POST', url: '/auth', payload: { username: 'ana', password: 'pw' } })).json()
  await call(t, app, { method: 'POST', url: '/auth', payload: { username: 'ana' } })
  await call(t, app, { method: 'POST', url: '/auth', payload: { username: 'ana', password: 'wrong' } })
  await call(t, app, { method: 'POST', url: '/auth', headers: json, payload: tooLarge })
  await call(t, app, { method: 'POST', url: '/auth', headers: { 'content-type': 'text/xml' }, payload: '<x/>' })

  await call(t, app, { url: '/auth/verify', headers: { authorization: access_token } })
  await call(t, app, { url: '/auth/verify' })
  await call(t, app, { url: '/auth/verify', headers: { authorization: expiredToken('ana') } })

  const auth = { authorization: access_token }
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: auth, payload: { refresh_token } })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: auth, payload: { refresh_token: 'x' } })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: auth, payload: {} })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: { ...auth, ...json }, payload: tooLarge })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: { ...auth, 'content-type': 'text/csv' }, payload: 'a' })

  await call(t, app, { url: '/version' })
  await call(t, app, { url: '/health' })
  await call(t, app, { url: '/ready' })
  await call(t, app, { url: '/openapi.json' })
  await call(t, app, { url: '/metrics' })
  // With WORKERS above 1, a scrape fails so when a worker does not hand its metrics over (as
  // test/process/workers-metrics.test.ts makes one do): the answer's shape, here in one process.
  const scrape = app.scrapeMetrics
  app.scrapeMetrics = () => Promise.reject(serviceUnavailable('The metrics of every worker could not be collected (Operation timed out.); try again shortly.'))
  await call(t, app, { url: '/metrics' })
  app.scrapeMetrics = scrape
  await app.store.close()
  await call(t, app, { url: '/ready' })

  const throttled = await build(t, { AUTH_RATE_LIMIT: '1', REFRESH_RATE_LIMIT: '1' })
  await call(t, throttled, { method: 'POST', url: '/auth', payload: {} })
  await call(t, throttled, { method: 'POST', url: '/auth', payload: {} })
  await call(t, throttled, { method: 'POST', url: '/auth/refresh', payload: {} })
  await call(t, throttled, { method: 'POST', url: '/auth/refresh', payload: {} })
})

t.test('real responses of the tracer and event routes match openapi.yaml', async (t) => {
  const app = await build(t)
  const writer = { authorization: (await userWithTokens(app, 'pipeline', 'writer')).access_token }
  const reader = { authorization: (await userWithTokens(app, 'operator', 'reader')).access_token }
  const member = { registered: true, should_be_at_minoc: true, larger_dataset: { name: 'n', scope: 's', preferred_storage_elements: ['minoc'], deletion_policy: 'keep' }, data_path: '/d', num_files: 2, missing_files: ['/d/1'] }
  const heartbeat = { event_no: 1, heartbeat_id: 1, site: 'kko', sent: { trigger_time: '2024-05-01T10:00:05Z', error: null }, received: { total_data_files: 2, dir_size_gb: 0.5, finished_time: '2024-05-01T10:10:00Z', heartbeat_sent_unix_s: 1714558200 } }
  const events = [
    { event_no: 1, timestamp_utc: '2024-05-01T10:00:00Z', snr: 20, known_source_name: 'B0329+54', dm: 26.8, tsar_classification: 'astrophysical', actions: { want: { baseband: true, kko_baseband: true }, got: { baseband: true } } },
    { event_no: 2, timestamp_utc: '2024-05-01T11:00:00Z', snr: 9, known_source_name: 'EXT' }
  ]
  const writes: [string, string, unknown][] = [
    ['POST', '/v1/events', events],
    ['POST', '/v1/event-tracer/create-trace', { event: 1, site: 'chime' }],
    ['POST', '/v1/event-tracer/update-trace', { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete' }],
    ['PUT', '/v1/event-tracer/datatrail/1/kko_baseband', member],
    ['POST', '/v1/event-tracer/heartbeats', [heartbeat]]
  ]
  for (const [method, url, payload] of writes) {
    await call(t, app, { method: method, url, headers: writer, payload: payload as object })
    await call(t, app, { method: method, url, headers: writer, payload: {} })
    await call(t, app, { method: method, url, payload: payload as object })
    await call(t, app, { method: method, url, headers: reader, payload: payload as object })
    await call(t, app, { method: method, url, headers: { ...writer, ...json }, payload: tooLarge })
    await call(t, app, { method: method, url, headers: { ...writer, 'content-type': 'text/csv' }, payload: 'a' })
  }

  const ndjson = { ...writer, 'content-type': 'application/x-ndjson' }
  await call(t, app, { method: 'POST', url: '/v1/events', headers: ndjson, payload: events.map((record) => JSON.stringify(record)).join('\n') })
  await call(t, app, { method: 'POST', url: '/v1/events', headers: ndjson, payload: '{"event_no": 1, "stauts": 1}' })

  const window = 'start_time_utc=2024-05-01&end_time_utc=2024-05-02'
  const reads = [
    `/v1/event-tracer/baseband-callbacks?${window}`,
    '/v1/event-tracer/event-status/1',
    '/v1/event-tracer/event-status/2',
    `/v1/events?${window}&limit=1`,
    '/v1/events/1',
    '/v1/events/2',
    `/v1/event-tracer/audit?${window}`,
    `/v1/event-tracer/audit?${window}&verdict=contradiction&site=kko`,
    '/v1/event-tracer/audit/1',
    '/v1/event-tracer/history/1',
    '/v1/event-tracer/heartbeats/1',
    `/v1/event-tracer/stage-latency?${window}`
  ]
  for (const url of reads) {
    const response = await call(t, app, { url, headers: reader })
    t.equal(response.statusCode, 200, url)
    await call(t, app, { url })
  }
  await call(t, app, { url: '/v1/event-tracer/baseband-callbacks?start_time_utc=2024-05-02', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/event-status/404', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/event-status/-1', headers: reader })
  await call(t, app, { url: '/v1/events?limit=0', headers: reader })
  await call(t, app, { url: '/v1/events/404', headers: reader })
  await call(t, app, { url: '/v1/events/-1', headers: reader })
  // The Python client's batch read: any authenticated user, the events keyed by number in the order asked.
  const batch = await call(t, app, { method: 'POST', url: '/v1/events/get_events', headers: reader, payload: { event_ids: [2, 404, 1] } })
  // Read in the text: JSON.parse puts integer-like keys in ascending order.
  t.strictSame([...batch.body.matchAll(/"(\d+)":\{"event_no":/g)].map((match) => match[1]), ['2', '1'], 'in the order asked')
  t.strictSame(Object.keys(JSON.parse(batch.body) as object).sort(), ['1', '2'], 'an object keyed by number')
  for (const payload of [{ event_ids: [] }, { event_ids: [1], extra: 1 }, { event_ids: ['1'] }]) {
    await call(t, app, { method: 'POST', url: '/v1/events/get_events', headers: reader, payload })
  }
  await call(t, app, { method: 'POST', url: '/v1/events/get_events', payload: { event_ids: [1] } })
  await call(t, app, { method: 'POST', url: '/v1/events/get_events', headers: { ...reader, ...json }, payload: tooLarge })
  await call(t, app, { method: 'POST', url: '/v1/events/get_events', headers: { ...reader, 'content-type': 'text/csv' }, payload: 'a' })
  await call(t, app, { url: `/v1/event-tracer/audit?${window}&verdict=late`, headers: reader })
  await call(t, app, { url: '/v1/event-tracer/audit/404', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/audit/2', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/audit/-1', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/history/404', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/history/-1', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/heartbeats/1?limit=0', headers: reader })
  await call(t, app, { url: '/v1/event-tracer/stage-latency?start_time_utc=2024-05-02', headers: reader })

  // The live stream: open (its first fragment is checked), refused beyond the user's share and
  // beyond MAX_STREAMS, bad filters, no token.
  const streaming = await build(t, { MAX_STREAMS: '2', MAX_STREAMS_PER_CLIENT: '1' })
  const streamReader = { authorization: (await userWithTokens(streaming, 'operator', 'reader')).access_token }
  const streamWriter = { authorization: (await userWithTokens(streaming, 'pipeline', 'writer')).access_token }
  const streamAdmin = { authorization: (await userWithTokens(streaming, 'root', 'admin')).access_token }
  const update = { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete' }
  const afterOpen = () => streaming.inject({ method: 'POST', url: '/v1/event-tracer/update-trace', headers: streamWriter, payload: update })
  // HEAD answers at once with the stream's headers and frees its slot.
  await callHead(t, streaming, { url: '/v1/event-tracer/stream?site=kko', headers: streamReader })
  const stream = await call(t, streaming, { url: '/v1/event-tracer/stream?site=kko', headers: streamReader, payloadAsStream: true, afterOpen })
  t.equal(stream.statusCode, 200)
  t.equal((await call(t, streaming, { url: '/v1/event-tracer/stream', headers: streamReader })).statusCode, 429)
  // From another address: the share of an address counts too, and every inject comes from one.
  const second = await streaming.inject({ url: '/v1/event-tracer/stream', headers: streamWriter, remoteAddress: '192.0.2.7', payloadAsStream: true })
  t.equal(second.statusCode, 200)
  const full = await call(t, streaming, { url: '/v1/event-tracer/stream', headers: streamAdmin, remoteAddress: '192.0.2.8' })
  t.equal(full.statusCode, 503)
  await call(t, streaming, { url: '/v1/event-tracer/stream?site=nowhere', headers: streamReader })
  await call(t, streaming, { url: '/v1/event-tracer/stream' })

  // Window reports and history parts beyond the user's share: a report whose client reads nothing yet holds the only one.
  const sharing = await build(t, { MAX_STREAMED_RESPONSES_PER_CLIENT: '1' })
  const sharingReader = { authorization: (await userWithTokens(sharing, 'operator', 'reader')).access_token }
  const day = Date.parse('2024-05-01T00:00:00Z')
  await sharing.store.events.upsert(
    Array.from({ length: 1234 }, (_, i) =>
      toEventRecord({ event_no: i, timestamp_utc: new Date(day + i * 60_000).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } }, sharing.config.TRACER_SITES, 1)
    )
  )
  // Prism first: its start takes seconds, and a report held unread that long gives its slot away.
  if (throughPrism) await prismFor(t, sharing)
  const held = await sharing.inject({ url: `/v1/event-tracer/baseband-callbacks?${window}`, headers: sharingReader, payloadAsStream: true })
  t.equal(held.statusCode, 200)
  for (const url of [`/v1/event-tracer/baseband-callbacks?${window}`, `/v1/event-tracer/audit?${window}`, `/v1/event-tracer/stage-latency?${window}`, '/v1/event-tracer/history/1']) {
    t.equal((await call(t, sharing, { url, headers: sharingReader })).statusCode, 429, url)
  }
  held.stream().resume()

  await app.store.close()
  for (const url of reads) await call(t, app, { url, headers: reader })
  await call(t, app, { method: 'POST', url: '/v1/events/get_events', headers: reader, payload: { event_ids: [1] } })
  for (const [method, url, payload] of writes) {
    await call(t, app, { method: method, url, headers: writer, payload: payload as object })
  }
})

/** Writes `request` and waits, however long the server takes, for its answer and the close. */
function answerWhenClosed(port: number, request: string) {
  return new Promise<ReturnType<typeof parseRaw>>((resolve) => {
    const chunks: Buffer[] = []
    const socket = connect({ port, host: '127.0.0.1' }, () => socket.write(request))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => resolve(parseRaw(Buffer.concat(chunks).toString('latin1'))))
  })
}

t.test('the refusals made before any route is chosen, over a real connection, match the responses every operation refers to', async (t) => {
  const app = await build(t, { REQUEST_TIMEOUT_MS: '1000' })
  const port = await listen(app)
  const tooLong = await rawRequest(port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'x'.repeat(20 * 1024)}\r\nConnection: close\r\n\r\n`)
  t.equal(tooLong.statusCode, 431)
  checkConnectionRefusal(t, 'RequestHeaderFieldsTooLarge', tooLong)
  // A body that stops arriving: the answer comes once REQUEST_TIMEOUT_MS have passed.
  const stalled = await answerWhenClosed(port, 'POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n{')
  t.equal(stalled.statusCode, 408)
  checkConnectionRefusal(t, 'RequestTimeout', stalled)
})

t.test('the live stream through Prism: held until the service ends it, then checked whole', { skip: !throughPrism && 'only with CONTRACT_THROUGH_PRISM=1 (npm run contract:prism)' }, async (t) => {
  const app = await build(t, { MAX_STREAMS_PER_CLIENT: '1' })
  const reader = { authorization: (await userWithTokens(app, 'operator', 'reader')).access_token }
  const writer = { authorization: (await userWithTokens(app, 'pipeline', 'writer')).access_token }
  await prismFor(t, app)
  const streamed = sendThroughPrism(t, app, { url: '/v1/event-tracer/stream?site=kko', headers: reader })
  // The reader's one stream is taken once Prism's request has reached the service (HEAD asks without taking it).
  await untilTrue(async () => (await app.inject({ method: 'HEAD', url: '/v1/event-tracer/stream', headers: reader })).statusCode === 429, 'the stream through Prism is open')
  const update = { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete' }
  t.equal((await app.inject({ method: 'POST', url: '/v1/event-tracer/update-trace', headers: writer, payload: update })).statusCode, 200)
  await app.close()
  const { status, violations } = await streamed
  t.equal(status, 200)
  t.strictSame(violations, [], 'the stream, a transition in it, breaks nothing')
})

t.test('every status openapi.yaml declares was produced and checked above', async (t) => {
  if (throughPrism) {
    t.comment(`through Prism: ${prismTally.requests} requests and one stream; ${prismTally.refusedAsPrismExpected} requests Prism found wrong, each refused by the service with a 4xx; no response broke the document`)
  }
  const missing = [...declared].filter((entry) => !exercised.has(entry))
  t.strictSame(missing, [])
})
