import t from 'tap'
import { HOUR, iso, NOW, pipelineApp } from './pipeline.js'

/*
 * What one event can return is bounded: event-status shows the first 1000 heartbeats and says how
 * many there are and where the rest are; the heartbeats and the history are read a part at a time.
 */

const heartbeat = (event_no: number, heartbeat_id: number) => ({
  event_no,
  heartbeat_id,
  site: 'kko',
  sent: { trigger_time: iso(NOW - HOUR), error: null },
  received: { total_data_files: 1, dir_size_gb: 1.5, finished_time: null, heartbeat_sent_unix_s: 1 }
})

const batch = (event_no: number, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => heartbeat(event_no, from + i))
const ids = (body: string) => (JSON.parse(body) as { heartbeat_id: number }[]).map((beat) => beat.heartbeat_id)
/** The target of a `Link: <...>; rel="next"` header, or null without one. */
const nextOf = (link: unknown) => (typeof link === 'string' ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null)

t.test('event-status holds the first 1000 heartbeats, their total and the link to the rest; the heartbeats route reads them all', async (t) => {
  const pipeline = await pipelineApp(t)
  for (let from = 1; from <= 1000; from += 1000) await pipeline.write('/v1/event-tracer/heartbeats', batch(1, from, from + 999))
  // The latest heartbeats are stored an hour later, beyond the first 1000 shown.
  pipeline.clock.now = NOW + HOUR
  for (let from = 1001; from <= 2500; from += 500) await pipeline.write('/v1/event-tracer/heartbeats', batch(1, from, from + 499))
  await pipeline.write('/v1/event-tracer/heartbeats', batch(2, 9000, 9004))

  const status = await pipeline.read('/v1/event-tracer/event-status/1')
  t.equal(status.statusCode, 200)
  const body = status.json<{ heartbeats: { heartbeat_id: number }[]; update_timestamp: number }>()
  t.equal(body.heartbeats.length, 1000, 'a thousand heartbeats shown')
  t.strictSame([body.heartbeats[0]!.heartbeat_id, body.heartbeats[999]!.heartbeat_id], [1, 1000], 'the first by heartbeat_id')
  t.equal(status.headers['x-heartbeats-total'], '2500')
  t.equal(nextOf(status.headers.link), '/v1/event-tracer/heartbeats/1?after_heartbeat_id=1000')
  t.equal(body.update_timestamp, (NOW + HOUR) / 1000, 'update_timestamp is still the latest of all its parts')

  const read: number[] = []
  let next: string | null = '/v1/event-tracer/heartbeats/1?limit=700'
  let parts = 0
  while (next !== null) {
    const part = await pipeline.read(next)
    t.equal(part.statusCode, 200, next)
    t.equal(part.headers['x-total-count'], '2500')
    read.push(...ids(part.body))
    next = nextOf(part.headers.link)
    parts++
  }
  t.equal(parts, 4, '700 + 700 + 700 + 400')
  t.strictSame(read, Array.from({ length: 2500 }, (_, i) => i + 1), 'every heartbeat once, in order, and no other event’s')

  const exact = await pipeline.read('/v1/event-tracer/heartbeats/1?after_heartbeat_id=1500&limit=1000')
  t.equal(ids(exact.body).length, 1000)
  t.notOk(exact.headers.link, 'no link when the part ends the list exactly')

  const few = await pipeline.read('/v1/event-tracer/event-status/2')
  t.equal(few.headers['x-heartbeats-total'], '5')
  t.notOk(few.headers.link, 'no link when all are shown')
  const none = await pipeline.read('/v1/event-tracer/heartbeats/3')
  t.equal(none.statusCode, 200)
  t.strictSame(none.json(), [], 'an event without heartbeats has an empty list')
  t.equal(none.headers['x-total-count'], '0')
})

t.test('history reads a part at a time: after the position the last part gave, and the link to the next part; no total', async (t) => {
  const pipeline = await pipelineApp(t)
  const flips = 1030
  for (let i = 0; i < flips; i++) {
    pipeline.clock.now = NOW + i * 1000
    await pipeline.write('/v1/event-tracer/update-trace', { event: 1, site: 'kko', stage: 'baseband_conversion', status: i % 2 === 0 ? 'complete' : 'incomplete' })
  }
  const atsOf = (body: string) => (JSON.parse(body) as { transitions: { at: number }[] }).transitions.map((transition) => transition.at)
  const expected = (from: number, count: number) => Array.from({ length: count }, (_, i) => (NOW + (from + i) * 1000) / 1000)
  const first = await pipeline.read('/v1/event-tracer/history/1')
  t.equal(first.statusCode, 200)
  t.strictSame(atsOf(first.body), expected(0, 1000), 'at most a thousand transitions unless fewer are asked for, oldest first')
  t.equal(first.headers['x-total-count'], undefined, 'no total: keeping one would cost every update-trace a write')
  const next = nextOf(first.headers.link)
  t.match(next, /^\/v1\/event-tracer\/history\/1\?after=[\w-]+&limit=1000$/, 'the next part starts after a position the service gives')

  const last = await pipeline.read(next!)
  t.strictSame(atsOf(last.body), expected(1000, 30))
  t.notOk(last.headers.link, 'the last part has no link')

  const small = await pipeline.read('/v1/event-tracer/history/1?limit=5')
  t.strictSame(atsOf(small.body), expected(0, 5))
  const smallNext = nextOf(small.headers.link)
  t.match(smallNext, /&limit=5$/, 'the next part has the same limit')
  t.strictSame(atsOf((await pipeline.read(smallNext!)).body), expected(5, 5))

  const oldFirst = await pipeline.read('/v1/event-tracer/history/1?offset=0&limit=1000')
  t.strictSame(atsOf(oldFirst.body), expected(0, 1000), 'an old link to the first part still reads it')
  const oldLink = await pipeline.read('/v1/event-tracer/history/1?offset=1000&limit=1000')
  t.equal(oldLink.statusCode, 400, 'an old link past the first part is refused')
  t.match(oldLink.json(), { exception: 'BadRequest', reasons: [/^query\.offset .*`after`/] }, 'naming the parameter that replaced it')

  for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'offset=x', 'after=', 'after=not-a-position', `after=${next!.split('after=')[1]!.split('&')[0]}x`]) {
    const refused = await pipeline.read(`/v1/event-tracer/history/1?${query}`)
    t.equal(refused.statusCode, 400, query)
    t.equal(refused.json().exception, 'BadRequest', query)
  }
  await pipeline.write('/v1/event-tracer/update-trace', { event: 2, site: 'kko', stage: 'baseband_conversion', status: 'complete' })
  const elsewhere = await pipeline.read(next!.replace('/history/1?', '/history/2?'))
  t.equal(elsewhere.statusCode, 400, 'a position of another event’s history is refused')
  t.match(elsewhere.json().reasons, [/^query\.after is not a position this service gave in the history of event 2$/])
  t.equal((await pipeline.read('/v1/event-tracer/history/3')).statusCode, 404, 'an unknown event is still 404')
  t.equal((await pipeline.read('/v1/event-tracer/heartbeats/1?limit=1001')).statusCode, 400)
})

t.test('a history read holds one of the client’s share of the expensive reads: beyond it, 429', async (t) => {
  const pipeline = await pipelineApp(t, { MAX_STREAMED_RESPONSES_PER_CLIENT: '1' })
  await pipeline.write('/v1/event-tracer/update-trace', { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete' })
  // The reader's one slot, held as a window report it is still reading would hold it.
  const held = pipeline.app.streamedResponses.documents.take({ user: 'operator', address: '192.0.2.9' })
  if (!('release' in held)) throw new Error('the slot was refused')
  const refused = await pipeline.read('/v1/event-tracer/history/1')
  t.equal(refused.statusCode, 429)
  t.equal(refused.headers['retry-after'], '2')
  t.match(refused.json(), { exception: 'TooManyRequests', reasons: [/^Your user already holds 1 of this instance's responses/] })
  held.release()
  t.equal((await pipeline.read('/v1/event-tracer/history/1')).statusCode, 200, 'once the slot is given back, read')
  t.equal(pipeline.app.streamedResponses.documents.taken, 0, 'and the read gave its own back')
})
