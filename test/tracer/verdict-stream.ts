import t, { type Test } from 'tap'
import { get, post, putEvents, event, tracerApp } from './fixtures.js'
import type { App } from '../helper.js'
import { SseClient } from '../sse.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'

const STREAM = '/v1/event-tracer/stream'

async function openStream(t: Test, app: App, token: string, query: string) {
  const response = await app.inject({ url: `${STREAM}${query}`, headers: { authorization: token }, payloadAsStream: true })
  const client = new SseClient(response.stream())
  await client.until(() => client.comments.length > 0, 'the stream is open')
  t.teardown(() => response.raw.res.destroy())
  return client
}

const at = (ms: number) => new Date(ms).toISOString()

t.test('with verdicts=true a stream also gets every verdict change its filters let through; without it, transitions only', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const plain = await openStream(t, app, reader, '')
  const all = await openStream(t, app, reader, '?verdicts=true')
  const kko = await openStream(t, app, reader, '?verdicts=true&site=kko')
  const second = await openStream(t, app, reader, '?verdicts=true&event_no=2')
  const now = Date.now()
  await putEvents(app, [event(1, at(now)), event(2, at(now), { actions: { want: { kko_baseband: true }, got: {} } })])
  // Registration complete while the stages before it are not: a contradiction.
  t.equal((await post(app, '/v1/event-tracer/update-trace', writer, { event: 1, site: 'chime', stage: 'data_registration', status: 'complete' })).statusCode, 200)

  await all.until(() => all.verdicts.length >= 3, 'three verdict changes')
  t.strictSame(
    all.verdicts.map(({ event_no, from, to }) => [event_no, from, to]),
    [
      [1, null, 'in_progress'],
      [2, null, 'in_progress'],
      [1, 'in_progress', 'contradiction']
    ],
    'events entering the audit, then the contradiction, in the order written'
  )
  const contradiction = all.verdicts[2]!
  t.strictSame(contradiction.became_stuck, [])
  t.match(contradiction.audit, { event_no: 1, sites: ['chime'], verdict: 'contradiction', findings: [{ rule: 'out-of-order', site: 'chime', stage: 'data_registration' }] })
  t.strictSame(contradiction.audit, (await get(app, '/v1/event-tracer/audit/1', reader)).json(), 'the audit it carries is the one /audit/{event_no} returns')

  await kko.until(() => kko.verdicts.length >= 1, 'the kko event')
  await second.until(() => second.verdicts.length >= 1, 'event 2')
  await plain.until(() => plain.transitions.length >= 1, 'the transition')
  // Every change above is in `all`, so by now the filtered streams have had their share of them.
  t.strictSame(kko.verdicts.map((change) => change.event_no), [2], 'site: events that asked that site')
  t.strictSame(second.verdicts.map((change) => change.event_no), [2], 'event_no: that event')
  t.equal(plain.messages.filter((message) => message.event !== 'transition').length, 0, 'a stream without verdicts=true carries transitions only')
  t.match(plain.text, /event: transition\n/)
  t.match(all.text, /\nevent: verdict\ndata: \{"event_no":1,"from":null,"to":"in_progress","at":"[^"]+","became_stuck":\[\],"audit":\{/)
})

t.test('a stage turns stuck on the stream once the app’s clock reaches its deadline, not before, with no write', async (t) => {
  // The deadline check reads the app's clock, which the test moves; the store looks at what is
  // written by its own (the events are of now, their deadlines an hour or more ahead of it). How
  // soon after a real deadline the stream has it is a wall-clock figure: test/process/verdict-stream.test.ts.
  const eventTime = Date.now()
  const clock = { now: eventTime }
  const { app, reader } = await tracerApp(t, { STAGE_DEADLINES: 'tsar_classification=2h,baseband_callback_request=1h' }, { now: () => clock.now })
  const client = await openStream(t, app, reader, '?verdicts=true')
  // Event 4's callback request is due half an hour before event 5's.
  await putEvents(app, [event(4, at(eventTime - 30 * 60_000)), event(5, at(eventTime))])
  await client.until(() => client.verdicts.length === 2, 'both events enter the audit')
  const deadline = eventTime + 3_600_000
  const stuckOf = (eventNo: number) => client.verdicts.filter((change) => change.event_no === eventNo && change.to === 'stuck')

  // A millisecond before event 5's deadline: a deadline check runs (event 4 turns stuck) and leaves event 5 be.
  clock.now = deadline - 1
  await client.until(() => stuckOf(4).length === 1, 'event 4, whose deadline has passed, turns stuck')
  t.match(stuckOf(4)[0], { at: at(deadline - 1), became_stuck: [{ stage: 'baseband_callback_request', deadline_utc: at(deadline - 30 * 60_000) }] }, 'judged at the app’s clock')
  t.strictSame(stuckOf(5), [], 'event 5 is not stuck a millisecond before its deadline')
  t.equal((await get(app, '/v1/event-tracer/audit/5', reader)).json().verdict, 'in_progress')

  clock.now = deadline
  await client.until(() => stuckOf(5).length === 1, 'event 5 turns stuck')
  t.match(stuckOf(5)[0], {
    event_no: 5,
    from: 'in_progress',
    to: 'stuck',
    at: at(deadline),
    became_stuck: [{ site: 'chime', stage: 'baseband_callback_request', deadline_utc: at(deadline) }],
    audit: { verdict: 'stuck', findings: [{ rule: 'stuck', site: 'chime', stage: 'baseband_callback_request' }] }
  })
  t.strictSame(
    client.verdicts.map(({ event_no, to }) => [event_no, to]),
    [
      [4, 'in_progress'],
      [5, 'in_progress'],
      [4, 'stuck'],
      [5, 'stuck']
    ],
    'each change once, in order'
  )
  t.equal(client.transitions.length, 0, 'no write: no transition')
  t.equal((await get(app, '/v1/event-tracer/audit/5', reader)).json().verdict, 'stuck')
})

t.test('a verdict change that cannot be written is skipped and counted: the rest of its page reaches every stream', async (t) => {
  const { app, reader } = await tracerApp(t)
  const all = await openStream(t, app, reader, '?verdicts=true')
  const ninth = await openStream(t, app, reader, '?verdicts=true&event_no=9')
  await putEvents(app, [event(1, at(Date.now()))])
  await all.until(() => all.verdicts.length >= 1, 'event 1 enters the audit')
  const db = openKeptDatabase(app.config.TRACER_DB)
  t.teardown(() => db.close())
  const written = db.prepare<[], string>('SELECT message FROM audit_changes WHERE event_no = 1').pluck().get()!
  const changeOf = (eventNo: number) => {
    const change = JSON.parse(written) as { event_no: number; audit: { event_no: number } }
    change.event_no = change.audit.event_no = eventNo
    return JSON.stringify(change)
  }
  // One page of the feed: a change, a row the verdict schema refuses (no `to`, no `audit`, ...), another change.
  const insert = db.prepare<[number, string]>('INSERT INTO audit_changes (event_no, message) VALUES (?, ?)')
  db.transaction(() => {
    insert.run(10, changeOf(10))
    insert.run(8, JSON.stringify({ event_no: 8, from: null }))
    insert.run(9, changeOf(9))
  })()
  await all.until(() => all.verdicts.length >= 3, 'the page’s two good changes')
  await ninth.until(() => ninth.verdicts.length >= 1, 'event 9 on its own stream')
  t.strictSame(all.verdicts.map((change) => change.event_no), [1, 10, 9], 'the changes either side of the bad row, in order')
  t.strictSame(ninth.verdicts.map((change) => change.event_no), [9])
  t.equal(app.verdictHub.unwritable, 1, 'the bad row is counted once')
})

t.test('a verdict change row that is not JSON at all is skipped and counted too: the feed goes on past it', async (t) => {
  const { app, reader } = await tracerApp(t)
  const all = await openStream(t, app, reader, '?verdicts=true')
  await putEvents(app, [event(1, at(Date.now()))])
  await all.until(() => all.verdicts.length >= 1, 'event 1 enters the audit')
  const db = openKeptDatabase(app.config.TRACER_DB)
  t.teardown(() => db.close())
  const written = db.prepare<[], string>('SELECT message FROM audit_changes WHERE event_no = 1').pluck().get()!
  const insert = db.prepare<[number, string]>('INSERT INTO audit_changes (event_no, message) VALUES (?, ?)')
  db.transaction(() => {
    insert.run(8, '{"event_no": 8, "from": nul')
    insert.run(1, written)
  })()
  await all.until(() => all.verdicts.length >= 2, 'the change after the broken row')
  t.strictSame(all.verdicts.map((change) => change.event_no), [1, 1])
  t.equal(app.verdictHub.unwritable, 1, 'the broken row is counted')
})
