import type { FastifyInstance } from 'fastify'
import { connect } from 'node:net'
import t from 'tap'
import traceStream from '../../plugins/trace-stream.js'
import { siteOfKey, transitionFilter } from '../../src/domain/transition-filter.js'
import { buildWithProbes, signJwt, claims, type App } from '../helper.js'
import { untilTrue } from '../raw-http.js'
import { SseClient } from '../sse.js'
import { assertRetryLater, post, tracerApp } from './fixtures.js'

const STREAM = '/v1/event-tracer/stream'
const KKO_CONVERSION = 'stages/baseband_conversion/sites/kko'

/** A stream opened through inject: its status and headers at once, its body as it arrives. */
async function openStream(app: App | FastifyInstance, token: string, query = '', url = STREAM) {
  const response = await app.inject({ url: `${url}${query}`, headers: { authorization: token }, payloadAsStream: true })
  const client = new SseClient(response.stream())
  await client.until(() => client.comments.length > 0, 'the stream is open')
  /** Leaves, as a client that closes its connection does. */
  const leave = () => response.raw.res.destroy()
  return { response, client, leave }
}

/** `promise`, or a rejection naming `what` when it has not settled within `ms`. */
const withDeadline = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting until ${what}`)), ms).unref())])

const update = (app: App, writer: string, event: number, site: string, stage: string, status = 'complete') =>
  post(app, '/v1/event-tracer/update-trace', writer, { event, site, stage, status })

t.test('the filter: an event, a key at a site by its whole name; the classification key is at no site', async (t) => {
  const transition = (event_no: number, key: string) => ({ event_no, key, from: null, to: 'complete' as const, at: 1, by: 'w' })
  t.equal(siteOfKey('stages/baseband_conversion/sites/kko'), 'kko')
  t.equal(siteOfKey('stages/tsar_classification'), null)
  t.equal(siteOfKey('stages/baseband_conversion/sites/kko/extra'), null)
  const atKo = transitionFilter({ site: 'ko' })
  t.notOk(atKo(transition(1, 'stages/baseband_conversion/sites/kko')), 'ko is not kko')
  t.notOk(transitionFilter({ site: 'kk' })(transition(1, 'stages/baseband_conversion/sites/kko')), 'nor kk')
  t.notOk(transitionFilter({ site: 'kko' })(transition(1, 'stages/tsar_classification')))
  t.ok(transitionFilter({})(transition(1, 'stages/tsar_classification')), 'no filter: everything')
  const both = transitionFilter({ eventNo: 0, site: 'kko' })
  t.ok(both(transition(0, 'stages/data_registration/sites/kko')), 'event 0 is an event like any other')
  t.notOk(both(transition(1, 'stages/data_registration/sites/kko')))
  t.notOk(both(transition(0, 'stages/data_registration/sites/chime')))
})

t.test('each stream gets every transition its filters let through, as standard SSE messages, and no other', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const before = await update(app, writer, 1, 'kko', 'baseband_conversion')
  t.equal(before.statusCode, 200)
  const streams = {
    all: await openStream(app, reader),
    event1: await openStream(app, reader, '?event_no=1'),
    kko: await openStream(app, reader, '?site=kko'),
    event1AtKko: await openStream(app, reader, '?event_no=1&site=kko&unknown=ignored'),
    chime: await openStream(app, reader, '?site=chime'),
    event3: await openStream(app, reader, '?event_no=3')
  }
  t.equal(streams.all.response.statusCode, 200)
  t.match(streams.all.response.headers, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' })

  const writes: [number, string, string, string][] = [
    [1, 'kko', 'baseband_conversion', 'incomplete'],
    [1, 'chime', 'data_registration', 'complete'],
    [2, 'kko', 'baseband_conversion', 'complete'],
    [1, 'kko', 'tsar_classification', 'complete'],
    [1, 'kko', 'tsar_classification', 'complete'],
    [2, 'gbo', 'data_registration', 'complete'],
    [1, 'kko', 'data_registration', 'complete']
  ]
  for (const [event, site, stage, status] of writes) t.equal((await update(app, writer, event, site, stage, status)).statusCode, 200)
  const keyOf = (event: number, key: string) => `${event} ${key}`
  const expected = {
    all: ['1 stages/baseband_conversion/sites/kko', '1 stages/data_registration/sites/chime', '2 stages/baseband_conversion/sites/kko', '1 stages/tsar_classification', '2 stages/data_registration/sites/gbo', '1 stages/data_registration/sites/kko'],
    event1: ['1 stages/baseband_conversion/sites/kko', '1 stages/data_registration/sites/chime', '1 stages/tsar_classification', '1 stages/data_registration/sites/kko'],
    kko: ['1 stages/baseband_conversion/sites/kko', '2 stages/baseband_conversion/sites/kko', '1 stages/data_registration/sites/kko'],
    event1AtKko: ['1 stages/baseband_conversion/sites/kko', '1 stages/data_registration/sites/kko'],
    chime: ['1 stages/data_registration/sites/chime'],
    event3: []
  }
  // Two last writes, between them wanted by every stream: a stream that has its last one has all
  // it will get of the writes above, since each stream gets its messages in the order written.
  await update(app, writer, 3, 'chime', 'baseband_conversion')
  await update(app, writer, 1, 'kko', 'baseband_callback_request')
  const lastOfEvent3 = '3 stages/baseband_conversion/sites/chime'
  const lastOfEvent1 = '1 stages/baseband_callback_request/sites/kko'
  const withLast: Record<keyof typeof streams, string[]> = {
    all: [...expected.all, lastOfEvent3, lastOfEvent1],
    event1: [...expected.event1, lastOfEvent1],
    kko: [...expected.kko, lastOfEvent1],
    event1AtKko: [...expected.event1AtKko, lastOfEvent1],
    chime: [...expected.chime, lastOfEvent3],
    event3: [...expected.event3, lastOfEvent3]
  }
  for (const [name, { client }] of Object.entries(streams)) {
    const wanted = withLast[name as keyof typeof streams]
    await client.until(() => client.transitions.length >= wanted.length, `${name} has ${wanted.length} transitions`)
    t.strictSame(client.transitions.map((transition) => keyOf(transition.event_no, transition.key)), wanted, `${name}: exactly its transitions, in the order written`)
  }

  const [first] = streams.all.client.messages
  t.equal(first?.event, 'transition')
  t.match(JSON.parse(first!.data), { event_no: 1, key: KKO_CONVERSION, from: 'complete', to: 'incomplete', by: 'pipeline', at: Number })
  t.strictSame(Object.keys(JSON.parse(first!.data)), ['event_no', 'key', 'from', 'to', 'at', 'by'], 'the transition schema’s members, in its order')
  t.match(streams.all.client.text, /^: stream open\n\nevent: transition\ndata: \{"event_no":1,"key":"stages\/baseband_conversion\/sites\/kko","from":"complete","to":"incomplete","at":[\d.]+,"by":"pipeline"\}\n\n/)
})

t.test('a bad filter is 400 naming the parameter; no token is 401; nothing is streamed then', async (t) => {
  const { app, reader } = await tracerApp(t)
  const bad: [string, RegExp][] = [
    ['event_no=-1', /^query\.event_no /],
    ['event_no=1.5', /^query\.event_no /],
    ['event_no=1e3', /^query\.event_no /],
    ['event_no=01', /^query\.event_no /],
    ['event_no=', /^query\.event_no /],
    ['event_no=abc', /^query\.event_no /],
    ['event_no=9007199254740992', /^query\.event_no must be <= 9007199254740991$/],
    ['event_no=1&event_no=2', /^query\.event_no /],
    ['site=nowhere', /^query\.site must be one of chime, kko, gbo, hco$/],
    ['site=KKO', /^query\.site /],
    ['site=', /^query\.site /]
  ]
  for (const [query, reason] of bad) {
    const response = await app.inject({ url: `${STREAM}?${query}`, headers: { authorization: reader } })
    t.equal(response.statusCode, 400, query)
    t.match(response.headers['content-type'], /^application\/json/)
    t.match(response.json(), { reasons: [reason], exception: 'BadRequest' }, query)
  }
  t.equal((await app.inject({ url: `${STREAM}?event_no=9007199254740991&site=hco`, headers: { authorization: reader }, payloadAsStream: true })).statusCode, 200, 'the largest event_no is fine')

  const anonymous = await app.inject({ url: STREAM })
  t.equal(anonymous.statusCode, 401)
  t.strictSame(anonymous.json(), { reasons: ['Authorization header not present.'], exception: 'Unauthorized' })
  const forged = await app.inject({ url: STREAM, headers: { authorization: signJwt(claims('operator'), { secret: 'another-secret-that-is-32-bytes-long!!' }) } })
  t.equal(forged.statusCode, 401)
  t.equal(forged.json().exception, 'InvalidToken')
  const inUrl = await app.inject({ url: `${STREAM}?token=${reader}&access_token=${reader}` })
  t.equal(inUrl.statusCode, 401, 'a token in the URL is not one')
})

t.test('beyond MAX_STREAMS: 503 with Retry-After in the envelope, before any byte; a slot frees when a stream ends', async (t) => {
  const { app, reader } = await tracerApp(t, { MAX_STREAMS: '2' })
  const first = await openStream(app, reader)
  await openStream(app, reader, '?site=kko')
  const refused = await app.inject({ url: STREAM, headers: { authorization: reader } })
  assertRetryLater(t, refused, 'This instance is already streaming 2 live streams, the most it serves at once; try again shortly.')
  t.equal((await app.inject({ url: '/v1/event-tracer/baseband-callbacks?start_time_utc=2024-05-01&end_time_utc=2024-05-02', headers: { authorization: reader } })).statusCode, 200, 'other streamed responses have their own bound')

  first.leave()
  await untilTrue(async () => {
    const next = await app.inject({ url: STREAM, headers: { authorization: reader }, payloadAsStream: true })
    if (next.statusCode === 200) next.raw.res.destroy()
    return next.statusCode === 200
  }, 'a slot is free once a stream ended')
  t.pass('a new stream opens')
})

t.test('an unavailable store is 503 before any byte, and gives its slot back', async (t) => {
  const { app, reader } = await tracerApp(t, { MAX_STREAMS: '1' })
  await app.store.close()
  for (let attempt = 0; attempt < 2; attempt++) {
    const response = await app.inject({ url: STREAM, headers: { authorization: reader } })
    t.equal(response.statusCode, 503)
    t.strictSame(response.json(), { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' }, 'the store’s error, not the bound')
  }
  t.equal(app.transitionHub.polling, false)
})

t.test('a comment line every keep-alive interval', async (t) => {
  // The route as the tracer registers it, with keep-alive comments 20 ms apart rather than 15 s.
  const app = await buildWithProbes(t, (probes) => {
    probes.register(
      async (scope) => {
        scope.addHook('onRequest', scope.authenticate)
        await scope.register(traceStream, { keepAliveMs: 20 })
      },
      { prefix: '/probe' }
    )
  })
  const token = signJwt(claims('operator'))
  const { client } = await openStream(app, token, '', '/probe/stream')
  await client.until(() => client.comments.length >= 4, 'three keep-alive comments')
  t.strictSame(client.comments.slice(0, 4), ['stream open', 'keep-alive', 'keep-alive', 'keep-alive'])
  t.match(client.text, /^: stream open\n\n: keep-alive\n\n: keep-alive\n\n: keep-alive\n\n/)
  t.strictSame(client.messages, [], 'comments are not messages')
})

t.test('a client that stops reading is dropped once it falls too far behind; one that reads gets everything', async (t) => {
  const { app, reader } = await tracerApp(t, { MAX_STREAMS: '2', STREAM_STALL_TIMEOUT_S: '3600' })
  const reading = await openStream(app, reader)
  // Takes its headers and the opening comment, then nothing: a few KiB of buffers fill, then its queue.
  const stalled = await app.inject({ url: STREAM, headers: { authorization: reader }, payloadAsStream: true })
  t.equal(stalled.statusCode, 200)
  const body = stalled.stream()
  const cut = new Promise<Error>((resolve) => body.once('error', resolve))

  const TRANSITIONS = 3000
  for (let i = 0; i < TRANSITIONS; i++) await app.store.traces.setStatus(7, KKO_CONVERSION, i % 2 === 0 ? 'complete' : 'incomplete', 1000 + i, 'pipeline')
  t.match(await withDeadline(cut, 10_000, 'the stalled client is disconnected'), { code: 'LIGHT_ECONNRESET' }, 'the stalled client was disconnected')
  await reading.client.until(() => reading.client.transitions.length === TRANSITIONS, `the reading client has all ${TRANSITIONS}`, 20_000)
  t.ok(reading.client.transitions.every((transition, i) => transition.at === 1000 + i), 'in order, none lost')
  t.equal(app.transitionHub.listeners, 1, 'the dropped stream no longer listens')
  await openStream(app, reader)
  t.pass('its slot is free')
})

t.test('an access token that expires while its stream is open does not end it', async (t) => {
  const { app, writer } = await tracerApp(t)
  const now = Math.floor(Date.now() / 1000)
  const shortLived = signJwt(claims('operator', { iat: now, exp: now + 2 }))
  const { client } = await openStream(app, shortLived)
  await untilTrue(async () => (await app.inject({ url: '/auth/verify', headers: { authorization: shortLived } })).statusCode === 401, 'the token has expired', 10_000)
  t.equal((await app.inject({ url: STREAM, headers: { authorization: shortLived } })).statusCode, 401, 'it opens no new stream')
  await update(app, writer, 5, 'kko', 'baseband_conversion')
  await client.until(() => client.transitions.length === 1, 'the open stream still delivers')
  t.match(client.transitions[0], { event_no: 5, key: KKO_CONVERSION })
})

t.test('the hub reads while a stream is open and stops with the last; closing the app ends every stream cleanly', async (t) => {
  const { app, reader } = await tracerApp(t)
  t.equal(app.transitionHub.polling, false, 'no stream, no reading')
  const one = await openStream(app, reader)
  t.equal(app.transitionHub.polling, true)
  one.leave()
  await untilTrue(() => !app.transitionHub.polling, 'the hub stops when the only stream ends')

  const streams = await Promise.all(['', '?site=kko', '?event_no=1'].map((query) => openStream(app, reader, query)))
  t.equal(app.transitionHub.listeners, 3)
  await app.close()
  for (const { client } of streams) t.equal(await client.ended, 'end', 'the body ended as a complete response')
  t.equal(app.transitionHub.polling, false)
  t.equal(app.transitionHub.listeners, 0)
})

t.test('over a real connection, the status, headers and opening comment leave at once, before any transition', async (t) => {
  const { app, reader } = await tracerApp(t)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const socket = connect({ port, host: '127.0.0.1' })
  t.teardown(() => socket.destroy())
  socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${reader}\r\nAccept-Encoding: gzip, br\r\n\r\n`)
  // Nothing is written to the store: whatever arrives was sent when the stream opened.
  let received = ''
  socket.on('data', (chunk: Buffer) => void (received += chunk.toString('latin1')))
  await untilTrue(() => received.includes(': stream open\n\n'), 'the opening comment arrives', 5000)
  const [head = '', body = ''] = received.split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 200 /)
  t.match(head, /\r\ncontent-type: text\/event-stream; charset=utf-8\r\n/i)
  t.match(head, /\r\ncache-control: no-cache, no-transform\r\n/i)
  t.match(head, /\r\nx-accel-buffering: no\r\n/i)
  t.notMatch(head, /content-encoding/i, 'not compressed, even when the client would take it')
  t.match(body, /^[0-9a-f]+\r\n: stream open\n\n\r\n$/, 'the opening comment, in a chunk of its own')
})
