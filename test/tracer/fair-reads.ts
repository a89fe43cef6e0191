import t from 'tap'
import { userWithTokens } from '../helper.js'
import { event, putEvents, tracerApp } from './fixtures.js'

const DAY = 86_400_000
const start = Date.parse('2024-01-01T00:00:00Z')
const YEAR = `start_time_utc=2024-01-01&end_time_utc=2024-12-31`

/** 2,000 baseband events over the year: a stage latency report of the year reads ten pages. */
async function yearApp(t: Parameters<typeof tracerApp>[0]) {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, Array.from({ length: 2000 }, (_, i) => event(i + 1, new Date(start + i * (360 * DAY) / 2000).toISOString())))
  return { app, hog: reader, other: (await userWithTokens(app, 'other', 'reader')).access_token }
}

t.test('expensive reads take turns by user: one user’s many reports do not hold another’s back; beyond its share, 429', async (t) => {
  const { app, hog, other } = await yearApp(t)
  const finished: string[] = []
  // From two addresses: each address also has its share.
  const ask = (who: string, token: string, path: string) =>
    app.inject({ url: `/v1/event-tracer/${path}?${YEAR}`, headers: { authorization: token }, remoteAddress: who === 'hog' ? '192.0.2.1' : '192.0.2.2' }).then((response) => {
      finished.push(`${who} ${response.statusCode}`)
      return response
    })
  // Twelve from one user (its share is eight), then one from another, all at once.
  const hogs = Array.from({ length: 12 }, (_, i) => ask('hog', hog, i % 2 === 0 ? 'stage-latency' : 'audit'))
  const others = ask('other', other, 'stage-latency')
  const responses = await Promise.all([...hogs, others])
  const refused = responses.filter((response) => response.statusCode === 429)
  t.equal(refused.length, 4, 'four of the twelve are beyond the user’s share')
  for (const response of refused) {
    t.equal(response.headers['retry-after'], '2')
    t.match(response.json(), { exception: 'TooManyRequests', reasons: [/^Your user already holds 8 of this instance's responses/] })
  }
  t.equal((await others).statusCode, 200)
  const served = finished.filter((entry) => entry.endsWith(' 200'))
  t.equal(served.length, 9)
  t.equal(served[0], 'other 200', `the other user’s report is done first: ${served.join(', ')}`)
})

t.test('two users behind one address: one holding its whole share leaves the other its own; the address as a whole stops at twice a user’s', async (t) => {
  const { app, other } = await yearApp(t)
  const third = (await userWithTokens(app, 'third', 'reader')).access_token
  const slots = app.streamedResponses.documents
  t.equal(slots.addressShare, 2 * slots.share, 'an address holds twice a user’s share')
  // Responses held open by their holders: the slots a stalled reader would keep.
  const held: (() => void)[] = []
  t.teardown(() => held.forEach((release) => release()))
  const take = (user: string) => {
    const taken = slots.take({ user, address: '192.0.2.9' })
    if ('release' in taken) held.push(taken.release)
    return 'release' in taken ? 'taken' : taken.refused
  }
  const hogs = Array.from({ length: slots.share + 1 }, () => take('hog'))
  t.strictSame(hogs, [...Array(slots.share).fill('taken'), 'user'], 'the hog stops at its own share')
  // The same address, another user: answered, whole, while the hog holds its share.
  const answer = await app.inject({ url: `/v1/event-tracer/stage-latency?${YEAR}`, headers: { authorization: other }, remoteAddress: '192.0.2.9' })
  t.equal(answer.statusCode, 200, 'another user behind the hog’s address is served')
  const others = Array.from({ length: slots.share }, () => take('other'))
  t.strictSame(others, Array(slots.share).fill('taken'), 'and may hold a share of its own')
  // The address now holds twice a user's share: a third user there waits for one to end.
  const refused = await app.inject({ url: `/v1/event-tracer/stage-latency?${YEAR}`, headers: { authorization: third }, remoteAddress: '192.0.2.9' })
  t.equal(refused.statusCode, 429)
  t.match(refused.json(), { exception: 'TooManyRequests', reasons: [/^Your address already holds 16 of this instance's responses/] })
  t.equal((await app.inject({ url: `/v1/event-tracer/stage-latency?${YEAR}`, headers: { authorization: third }, remoteAddress: '192.0.2.10' })).statusCode, 200, 'from another address it is served')
  held.pop()!()
  t.equal((await app.inject({ url: `/v1/event-tracer/stage-latency?${YEAR}`, headers: { authorization: third }, remoteAddress: '192.0.2.9' })).statusCode, 200, 'and behind the address once a slot is given back')
})

t.test('the batch read takes its turns in the queue of expensive reads: it waits while the queue is busy, and turns go round the users', async (t) => {
  const { app, reader: hog } = await tracerApp(t)
  await putEvents(app, Array.from({ length: 20 }, (_, i) => event(i + 1, new Date(start + i * DAY).toISOString())))
  const other = (await userWithTokens(app, 'other', 'reader')).access_token
  const served: string[] = []
  const ask = (who: string, token: string) =>
    app
      .inject({ method: 'POST', url: '/v1/events/get_events', headers: { authorization: token }, payload: { event_ids: [3, 1, 2] } })
      .then((response) => {
        served.push(`${who} ${response.statusCode}`)
        return response
      })
  // The queue is busy: another user's page read holds its one turn (one at a time on SQLite).
  const end = await app.windowReads.turn('someone else')
  const asked = [...Array.from({ length: 5 }, () => ask('hog', hog)), ask('other', other)]
  const settled = Promise.all(asked)
  // Until all six wait in line or any is answered: a count, not a time.
  while (app.windowReads.waiting < 6 && served.length === 0) await new Promise((resolve) => setImmediate(resolve))
  t.strictSame(served, [], 'no batch read is answered while the queue is busy')
  t.equal(app.windowReads.waiting, 6, 'all six wait for a turn')
  end()
  const responses = await settled
  t.ok(responses.every((response) => response.statusCode === 200 && response.body.startsWith('{"3":')), 'each then answered whole')
  t.ok(served.indexOf('other 200') <= 1, `the other user's read comes in the first round: ${served.join(', ')}`)
})
