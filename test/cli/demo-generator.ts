import t from 'tap'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import { seedDemo, SeedOptionsError, type SeedOptions } from '../../src/demo/generate.js'
import { mulberry32 } from '../../src/demo/random.js'
import type { DatatrailRecord, EventRecord, FeedTransition, TraceRecord } from '../../src/domain/records.js'
import type { Store } from '../../src/store/port.js'
import { siteModel } from '../../src/vocabulary.js'

const SITES = siteModel(['chime', 'kko', 'gbo', 'hco'])
const NOW = Date.parse('2025-03-01T00:00:00Z')
const DAY = 86_400_000

/** The four bulk methods seedDemo uses, recording every call. */
function recordingStore() {
  const written = { events: [] as EventRecord[], traces: [] as TraceRecord[], datatrail: [] as DatatrailRecord[], heartbeats: [] as HeartbeatInput[], transitions: [] as FeedTransition[] }
  const calls: string[] = []
  const store = {
    events: { upsert: async (events: EventRecord[]) => (calls.push('events'), written.events.push(...events), events.length) },
    traces: {
      upsert: async (traces: TraceRecord[]) => (calls.push('traces'), written.traces.push(...traces), traces.length),
      record: async (transitions: FeedTransition[]) => (calls.push('history'), written.transitions.push(...transitions), transitions.length)
    },
    datatrail: { put: async (items: DatatrailRecord[]) => void (calls.push('datatrail'), written.datatrail.push(...items)) },
    heartbeats: { add: async (heartbeats: HeartbeatInput[]) => (calls.push('heartbeats'), written.heartbeats.push(...heartbeats), heartbeats.length) }
  }
  return { store: store as unknown as Store, written, calls }
}

async function generate(options: Partial<SeedOptions> = {}) {
  const recording = recordingStore()
  const counts = await seedDemo(recording.store, SITES, { events: 3000, days: 30, seed: 7, now: NOW, ...options })
  return { ...recording, counts }
}

t.test('mulberry32 is deterministic and uniform enough', async (t) => {
  const a = mulberry32(42)
  const b = mulberry32(42)
  const values = Array.from({ length: 10_000 }, () => a())
  t.strictSame(values.slice(0, 5), Array.from({ length: 5 }, () => b()))
  t.ok(values.every((value) => value >= 0 && value < 1))
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length
  t.ok(Math.abs(mean - 0.5) < 0.02, `mean ${mean}`)
  t.not(mulberry32(43)(), mulberry32(42)())
})

t.test('the same seed and now give the same data; another seed other data', async (t) => {
  const first = await generate()
  const second = await generate()
  // As JSON: a deep comparison of some 10,000 objects takes tap seconds.
  t.equal(JSON.stringify(second.written), JSON.stringify(first.written))
  const other = await generate({ seed: 8 })
  t.not(JSON.stringify(other.written.events), JSON.stringify(first.written.events))
})

t.test('batches: each bulk method once per batch, event numbers counting up from the base', async (t) => {
  const { written, calls, counts } = await generate({ events: 2500, batchSize: 1000, firstEventNo: 500 })
  t.strictSame(calls.filter((call) => call === 'events').length, 3)
  // Each batch's events last, after their other records (generate.ts says why).
  t.strictSame(calls.slice(0, 5), ['traces', 'datatrail', 'heartbeats', 'history', 'events'])
  t.strictSame(written.events.map((event) => event.event_no), Array.from({ length: 2500 }, (_, index) => 500 + index))
  t.equal(counts.events, 2500)
  t.equal(counts.traces, written.traces.length)
  t.equal(counts.datatrail, written.datatrail.length)
  t.equal(counts.heartbeats, written.heartbeats.length)
  t.equal(counts.basebandEvents, written.events.filter((event) => event.baseband_requested).length)
})

t.test('the events: spread over the days before now, long-tailed SNR, sources, some without dm', async (t) => {
  const progress: number[] = []
  const { written } = await generate({ onProgress: (done) => progress.push(done) })
  const events = written.events
  t.strictSame(progress, [3000])
  t.ok(events.every((event) => event.timestamp >= NOW - 30 * DAY && event.timestamp < NOW))
  t.ok(events.every((event, index) => index === 0 || event.timestamp >= events[index - 1]!.timestamp), 'ascending')
  const lastDay = events.filter((event) => event.timestamp >= NOW - DAY).length
  t.ok(lastDay > 50 && lastDay < 150, `about a 30th in the last day (${lastDay})`)
  const snrs = events.map((event) => event.snr).sort((a, b) => a - b)
  t.ok(snrs[0]! >= 8)
  t.ok(snrs[1500]! < 20 && snrs[2990]! > 100, 'most faint, a few very bright')
  const sources = new Set(events.map((event) => event.known_source_name))
  for (const name of ['EXT', 'AMB', 'GAL', 'B0329+54', 'B0531+21', 'B1933+16']) t.ok(sources.has(name), name)
  const nullDm = events.filter((event) => event.dm === null).length
  t.ok(nullDm > 50 && nullDm < 400, `some without dm (${nullDm})`)
  const baseband = events.filter((event) => event.baseband_requested)
  t.ok(baseband.length > 450 && baseband.length < 750, `15-25% ask for baseband (${baseband.length})`)
  t.ok(baseband.every((event) => event.actions.want.baseband === true), 'always at the primary site')
  t.ok(baseband.some((event) => event.actions.want.kko_baseband === true))
  t.ok(baseband.some((event) => event.actions.want.kko_baseband !== true))
})

t.test('the parts: mostly consistent with the trace, sometimes not', async (t) => {
  const { written } = await generate({ events: 5000 })
  const basebandEvents = new Set(written.events.filter((event) => event.baseband_requested).map((event) => event.event_no))
  const traces = new Map(written.traces.map((trace) => [trace.event_no as number, trace]))
  t.ok(written.traces.every((trace) => basebandEvents.has(trace.event_no as number)))
  t.ok(traces.size > 0.85 * basebandEvents.size, 'most baseband events have a trace')
  t.ok(written.datatrail.every((item) => basebandEvents.has(item.event_no) && SITES.dataProducts.includes(item.member)))
  t.ok(written.heartbeats.every((heartbeat) => basebandEvents.has(heartbeat.event_no)))
  t.equal(new Set(written.heartbeats.map((heartbeat) => heartbeat.heartbeat_id)).size, written.heartbeats.length, 'unique ids')

  const statuses = (stage: string) => written.traces.map((trace) => trace[`stages/${stage}/sites/chime`])
  const complete = (stage: string) => statuses(stage).filter((status) => status === 'complete').length
  t.ok(complete('baseband_callback_request') > complete('baseband_conversion'))
  t.ok(complete('baseband_conversion') > complete('data_registration'))
  t.ok(complete('data_registration') > complete('data_replication_to_minoc'))
  t.ok(written.traces.some((trace) => Object.values(trace).includes('not_required')))

  let agree = 0
  let disagree = 0
  for (const item of written.datatrail) {
    const trace = traces.get(item.event_no)
    if (trace === undefined || item.member !== 'baseband') continue
    const registered = trace['stages/data_registration/sites/chime'] === 'complete'
    if (registered === item.value.registered) agree++
    else disagree++
  }
  t.ok(disagree > 0 && disagree < 0.05 * (agree + disagree), `registered mostly agrees (${agree} : ${disagree})`)
})

t.test('the history of every complete key, made by the pipeline (the classification by tsar) after the event', async (t) => {
  const { written } = await generate()
  const traces = new Map(written.traces.map((trace) => [trace.event_no as number, trace]))
  const events = new Map(written.events.map((event) => [event.event_no, event]))
  const completeKeys = written.traces.flatMap((trace) =>
    Object.entries(trace)
      .filter(([, value]) => value === 'complete')
      .map(([key]) => `${String(trace.event_no)} ${key}`)
  )
  t.ok(completeKeys.length > 1000, `${completeKeys.length} complete keys`)
  t.strictSame(written.transitions.map((item) => `${item.event_no} ${item.key}`).sort(), completeKeys.sort(), 'one transition per complete key, none else')
  // A site whose clock runs half a day behind (the fault completed-before-event finds) records its stages up to 12 h early.
  const recordedEarly = new Set<number>()
  for (const item of written.transitions) {
    const event = events.get(item.event_no)!
    if (item.from !== 'incomplete' || item.to !== 'complete' || traces.get(item.event_no)?.[item.key] !== 'complete') t.fail(`${JSON.stringify(item)}`)
    if (item.at < event.timestamp / 1000 - 12 * 3600 || item.at > NOW / 1000) t.fail(`${JSON.stringify(item)} is not between 12 h before its event and now`)
    if (item.at < event.timestamp / 1000) recordedEarly.add(item.event_no)
    if (item.by !== (item.key === 'stages/tsar_classification' ? 'tsar' : 'pipeline')) t.fail(`${JSON.stringify(item)} by whom?`)
  }
  t.ok(recordedEarly.size > 0 && recordedEarly.size < 0.02 * events.size, `a few events recorded early (${recordedEarly.size} of ${events.size})`)
})

t.test('options it cannot honour', async (t) => {
  const store = recordingStore().store
  const seed = (options: Partial<SeedOptions>) => seedDemo(store, SITES, { events: 10, days: 1, seed: 1, now: NOW, ...options })
  await t.rejects(seed({ events: 0 }), SeedOptionsError)
  await t.rejects(seed({ days: 0 }), SeedOptionsError)
  await t.rejects(seed({ days: 1e9 }), /before 1970/)
  await t.rejects(seed({ firstEventNo: Number.MAX_SAFE_INTEGER - 5 }), /event numbers above/)
})
