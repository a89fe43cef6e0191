import t, { type Test } from 'tap'
import type { VerdictChange } from '../../schemas/audit.js'
import traceStream from '../../plugins/trace-stream.js'
import { verdictPlace } from '../../src/infrastructure/live-stream/transition-hub.js'
import { VerdictBacklog } from '../../src/infrastructure/live-stream/verdict-backlog.js'
import { emptyFacts } from '../../src/domain/audit/kept-facts.js'
import { lookAt, verdictChange } from '../../src/domain/audit/kept-look.js'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import { siteModel } from '../../src/vocabulary.js'
import { buildWithProbes, claims, signJwt, type App } from '../helper.js'
import { SseClient } from '../sse.js'
import { event, get, putEvents, tracerApp } from './fixtures.js'

const STREAM = '/v1/event-tracer/stream'

/** `promise`, or a rejection naming `what` when it has not settled within `ms`. */
const withDeadline = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting until ${what}`)), ms).unref())])
const HOUR = 3_600_000
const BURST = 5000

async function openStream(t: Test, app: App | Awaited<ReturnType<typeof buildWithProbes>>, token: string, url: string) {
  const response = await app.inject({ url, headers: { authorization: token }, payloadAsStream: true })
  const client = new SseClient(response.stream())
  await client.until(() => client.comments.length > 0, 'the stream is open')
  let ended: 'end' | Error | undefined
  void client.ended.then((how) => (ended = how))
  t.teardown(() => response.raw.res.destroy())
  return { client, ended: () => ended }
}

/** Each message's changes, parsed once: a client waits on them at every arrival. */
const parsed = new WeakMap<object, VerdictChange[]>()
const changesIn = (message: SseClient['messages'][number]): VerdictChange[] => {
  let changes = parsed.get(message)
  if (changes === undefined) {
    if (message.event === 'verdict') changes = [JSON.parse(message.data) as VerdictChange]
    else if (message.event === 'verdicts') changes = (JSON.parse(message.data) as { changes: VerdictChange[] }).changes
    else changes = []
    parsed.set(message, changes)
  }
  return changes
}

/** Every verdict change a client received, in order: those of `verdict` messages and each of every `verdicts` message. */
const changesOf = (client: SseClient): VerdictChange[] => client.messages.flatMap(changesIn)

/** How many events a client last heard to be stuck, followed as its messages arrive. */
function stuckCounter(client: SseClient) {
  const latest = new Map<number, VerdictChange['to']>()
  let read = 0
  let stuck = 0
  return () => {
    for (; read < client.messages.length; read++) {
      for (const change of changesIn(client.messages[read]!)) {
        if (latest.get(change.event_no) === 'stuck') stuck--
        if (change.to === 'stuck') stuck++
        latest.set(change.event_no, change.to)
      }
    }
    return stuck
  }
}

t.test('a deadline passing for 5,000 events reaches a client that fell behind, every event named, and its stream stays open', async (t) => {
  // The store looks at what is written by its own clock: the events are of now, their deadline an hour ahead of the app's clock too.
  const eventTime = Date.now()
  const clock = { now: eventTime + 60_000 }
  const { app, reader } = await tracerApp(t, { STAGE_DEADLINES: 'tsar_classification=2h,baseband_callback_request=1h', STREAM_STALL_TIMEOUT_S: '3600' }, { now: () => clock.now })
  await putEvents(
    app,
    Array.from({ length: BURST }, (_, i) => event(i + 1, new Date(eventTime).toISOString()))
  )
  const query = `${STREAM}?verdicts=true`
  const live = await openStream(t, app, reader, query)
  const behind = await openStream(t, app, reader, query)
  // Busy elsewhere (a page rendering) while the burst comes: it takes nothing until the burst is handed out.
  behind.client.body.pause()

  const liveStuck = stuckCounter(live.client)
  const behindStuck = stuckCounter(behind.client)
  clock.now = eventTime + HOUR + 1000
  await live.client.until(() => liveStuck() === BURST, `the reading client hears all ${BURST} turn stuck`, 60_000)
  // Both streams have the same filter: every change the live client got was offered to the other too.
  t.equal(live.ended(), undefined, 'the client that reads all along keeps its stream')

  behind.client.body.resume()
  await behind.client.until(() => behindStuck() === BURST, `the client behind hears all ${BURST} turn stuck`, 60_000)
  t.equal(behind.ended(), undefined, 'the client that fell behind keeps its stream')
  const folded = behind.client.messages.filter((message) => message.event === 'verdicts')
  t.ok(folded.length > 0, 'what came while it was behind came folded')
  const perMessage = folded.map((message) => (JSON.parse(message.data) as { changes: VerdictChange[] }).changes)
  t.ok(
    perMessage.every((changes) => changes.length <= 500 && new Set(changes.map((change) => change.event_no)).size === changes.length),
    'each verdicts message names each of its events once, 500 at most'
  )
  const sample = perMessage[0]![0]!
  t.match(sample, { from: 'in_progress', to: 'stuck', became_stuck: [{ site: 'chime', stage: 'baseband_callback_request' }] }, 'a folded change is a VerdictChange')
  t.strictSame(sample.audit, (await get(app, `/v1/event-tracer/audit/${sample.event_no}`, reader)).json(), 'with the audit /audit/{event_no} returns')
  const single = behind.client.messages.find((message) => message.event === 'verdict')
  t.match(single?.data, /^\{"event_no":\d+,"from":"in_progress","to":"stuck","at":"[^"]+","became_stuck":\[\{/, 'what it took before falling behind came as verdict messages')
})

t.test('a client that stops reading is dropped once its folded verdict changes pass the bound', async (t) => {
  // The route as the tracer registers it, with a bound of 50 KB rather than 64 MiB.
  const app = await buildWithProbes(
    t,
    (probes) => {
      probes.register(
        async (scope) => {
          scope.addHook('onRequest', scope.authenticate)
          await scope.register(traceStream, { backlogBytes: 50_000 })
        },
        { prefix: '/probe' }
      )
    },
    { STREAM_STALL_TIMEOUT_S: '3600' }
  )
  const stalled = await openStream(t, app, signJwt(claims('operator')), '/probe/stream?verdicts=true')
  stalled.client.body.pause()
  // 4,000 events entering the audit at once, through the store's writes: about 800 KB of verdict changes, 200 KB of them queued.
  const start = Date.parse('2026-03-01T00:00:00Z')
  await putEvents(app, Array.from({ length: 4000 }, (_, i) => event(i + 1, new Date(start + i).toISOString())))
  const cut = await withDeadline(stalled.client.ended, 20_000, 'the stalled client is disconnected')
  t.match(cut, { code: 'LIGHT_ECONNRESET' }, 'the stalled client was disconnected')
})

t.test('a site stream hears an event that leaves the audit; a change is placed at the sites its event left', async (t) => {
  const { app, reader } = await tracerApp(t)
  const at = new Date().toISOString()
  const kkoOnly = { actions: { want: { kko_baseband: true }, got: {} } }
  await putEvents(app, [event(1, at, kkoOnly), event(2, at, kkoOnly)])
  const kko = await openStream(t, app, reader, `${STREAM}?verdicts=true&site=kko`)
  const first = await openStream(t, app, reader, `${STREAM}?verdicts=true&event_no=1&site=kko`)
  // Event 1 asks for no baseband data any more: it leaves the audit, and so every filter of a site.
  await putEvents(app, [event(1, at, { actions: { want: {}, got: {} } })])
  await kko.client.until(() => changesOf(kko.client).length >= 1, 'the kko stream hears it')
  await first.client.until(() => changesOf(first.client).length >= 1, 'the stream of event 1 at kko hears it')
  t.match(changesOf(kko.client), [{ event_no: 1, from: 'in_progress', to: null, audit: null, left_sites: ['kko'] }], 'the store tells the sites it left')
  t.match(changesOf(first.client), [{ event_no: 1, from: 'in_progress', to: null, audit: null, left_sites: ['kko'] }])

  const place = verdictPlace(['chime', 'kko', 'gbo'])
  const change = changesOf(kko.client)[0]!
  t.strictSame(place(change), { eventNo: 1, sites: ['kko'] }, 'left the audit: at the sites it left')
  t.strictSame(place({ ...change, left_sites: undefined }), { eventNo: 1, sites: ['chime', 'kko', 'gbo'] }, 'left the audit, its sites untold: at every site')
  const audit = { event_no: 3, timestamp_utc: at, snr: 1, known_source_name: 'x', sites: ['chime'], verdict: 'in_progress' as const, findings: [] }
  const left: VerdictChange = { event_no: 3, from: 'in_progress', to: 'in_progress', at, became_stuck: [], audit, left_sites: ['kko'] }
  t.strictSame(place(left), { eventNo: 3, sites: ['chime', 'kko'] }, 'at the sites it asks and those it left')
  t.strictSame(place({ ...left, left_sites: undefined }), { eventNo: 3, sites: ['chime'] })
})

t.test('a backlog holds each event once: from the verdict first left unsaid to the latest, every stage that turned stuck', async (t) => {
  const at = '2026-03-01T00:00:00.000Z'
  const audit = (verdict: 'stuck' | 'contradiction' | 'in_progress', sites = ['chime', 'kko']) => ({
    event_no: 1, timestamp_utc: at, snr: 1, known_source_name: 'x', sites, verdict, findings: []
  })
  const stuck = (site: string) => ({ site, stage: 'baseband_callback_request' as const, deadline_utc: at })
  const changes: VerdictChange[] = [
    { event_no: 1, from: 'in_progress', to: 'stuck', at, became_stuck: [stuck('chime')], audit: audit('stuck') },
    { event_no: 2, from: null, to: 'in_progress', at, became_stuck: [], audit: { ...audit('in_progress'), event_no: 2 } },
    { event_no: 1, from: 'stuck', to: 'stuck', at, became_stuck: [stuck('kko'), stuck('chime')], audit: audit('stuck', ['chime']), left_sites: ['kko'] },
    { event_no: 1, from: 'stuck', to: 'contradiction', at, became_stuck: [], audit: audit('contradiction', ['chime']) }
  ]
  const backlog = new VerdictBacklog((change) => JSON.stringify(change))
  backlog.add(changes)
  t.equal(backlog.bytes, JSON.stringify(changes[1]).length + JSON.stringify(changes[3]).length, 'it counts the latest change of each event')
  t.strictSame(backlog.changes(10), [
    { ...changes[3], from: 'in_progress', became_stuck: [stuck('chime'), stuck('kko')], left_sites: ['kko'] },
    changes[1]
  ])
  t.ok(backlog.empty)
  t.equal(backlog.bytes, 0)
  backlog.add(changes.slice(0, 2))
  const message = backlog.take()
  t.equal(message, `event: verdicts\ndata: {"changes":[${JSON.stringify(changes[0])},${JSON.stringify(changes[1])}]}\n\n`, 'one message, one line of JSON')
})

t.test('a change of the sites an event asks is a verdict change when the sites before are known, naming those it left', async (t) => {
  const settings = { sites: siteModel(['chime', 'kko', 'gbo']), deadlines: parseStageDeadlines(DEFAULT_STAGE_DEADLINES), now: Date.parse('2026-03-01T12:10:00Z') }
  const facts = emptyFacts(7)
  facts.event = { timestamp: Date.parse('2026-03-01T12:00:00Z'), snr: 1, known_source_name: 'x', tsar_classification: null, requested: ['chime'], listed: true }
  const after = lookAt(facts, settings)
  const before = after.look
  t.equal(verdictChange(facts, before, after, settings), null, 'without the sites before: as before, nothing moved')
  t.equal(verdictChange(facts, before, after, settings, ['chime']), null, 'the same sites: nothing moved')
  t.match(verdictChange(facts, before, after, settings, ['chime', 'kko']), { event_no: 7, from: 'in_progress', to: 'in_progress', left_sites: ['kko'], audit: { sites: ['chime'] } })
  const entered = verdictChange(facts, before, after, settings, [])
  t.match(entered, { from: 'in_progress', to: 'in_progress', audit: { sites: ['chime'] } }, 'an event that asks a site more is heard by its streams too')
  t.notOk(entered !== null && 'left_sites' in entered, 'having left none, it names none')
})
