import t, { type Test } from 'tap'
import { get, post, putEvents, event, tracerApp } from './fixtures.js'
import type { App } from '../helper.js'
import { SseClient } from '../sse.js'

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

t.test('a stage that passes its deadline turns stuck on the stream, with no write, within 2 s of the deadline', async (t) => {
  const { app, reader } = await tracerApp(t, { STAGE_DEADLINES: 'baseband_callback_request=2s' })
  const client = await openStream(t, app, reader, '?verdicts=true&event_no=5')
  const eventTime = Date.now()
  await putEvents(app, [event(5, at(eventTime))])
  await client.until(() => client.verdicts.some((change) => change.to === 'stuck'), 'event 5 turns stuck', 15_000)
  const [entered, stuck] = client.verdicts
  t.match(entered, { event_no: 5, from: null, to: 'in_progress', became_stuck: [] })
  const deadline = eventTime + 2000
  t.match(stuck, {
    event_no: 5,
    from: 'in_progress',
    to: 'stuck',
    became_stuck: [{ site: 'chime', stage: 'baseband_callback_request', deadline_utc: at(deadline) }],
    audit: { verdict: 'stuck', findings: [{ rule: 'stuck', site: 'chime', stage: 'baseband_callback_request' }] }
  })
  const arrival = client.messages.find((message) => message.event === 'verdict' && message.data.includes('"to":"stuck"'))!.arrivedAt
  t.ok(arrival >= deadline, 'not before the deadline')
  t.ok(arrival - deadline < 2000, `on the stream ${arrival - deadline} ms after the deadline (at most 2 s)`)
  t.equal((await get(app, '/v1/event-tracer/audit/5', reader)).json().verdict, 'stuck')
})
