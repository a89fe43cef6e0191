import t from 'tap'
import { defaultSites } from '../sites.js'
import { toEventRecord } from '../../src/domain/events.js'
import { STAGES } from '../../src/vocabulary.js'
import { FIXTURE_EVENTS, pipelineTraces } from './fixtures/pipeline-traces.js'
import { mongoApp } from './mongo-app.js'
import { mongoBackends } from './mongo-backends.js'

const SITES = ['chime', 'kko', 'gbo', 'hco']
const KEYS = ['stages/tsar_classification', ...STAGES.flatMap((stage) => SITES.map((site) => `stages/${stage}/sites/${site}`))]

/** The trace as both routes must show it: every key, only complete/incomplete, nothing else stored. */
const expected = (event_no: number, update_timestamp: number, complete: string[]) => ({
  event_no,
  ...Object.fromEntries(KEYS.map((key) => [key, complete.includes(key) ? 'complete' : 'incomplete'])),
  update_timestamp
})

const EXPECTED = [
  expected(310_000_001, 1714557700.5, [
    'stages/tsar_classification',
    'stages/baseband_callback_request/sites/chime',
    'stages/baseband_conversion/sites/chime'
  ]),
  expected(3_100_000_002, 1714557800, [
    'stages/baseband_callback_request/sites/gbo',
    'stages/baseband_conversion/sites/gbo',
    'stages/data_registration/sites/kko'
  ]),
  expected(310_000_003, 1714557900.25, ['stages/data_replication_to_minoc/sites/hco']),
  expected(310_000_004, 1714558000, ['stages/tsar_classification']),
  expected(310_000_005, 0, ['stages/baseband_callback_request/sites/kko'])
]

for (const backend of mongoBackends()) {
  t.test(`traces the pipeline wrote into MongoDB read through both routes (${backend.name})`, async (t) => {
    const { store, db } = await backend.open(t)
    for (const document of pipelineTraces) await db.collection('trace').insertOne({ ...document })
    // Events for all but the last: that one is known from its trace alone.
    const now = 1714560000
    await store.events.upsert(
      FIXTURE_EVENTS.slice(0, 4).map((event_no, i) =>
        toEventRecord(
          { event_no, timestamp_utc: `2024-05-01T10:0${i}:00Z`, snr: 12, known_source_name: 'EXT', actions: { want: { kko_baseband: true }, got: {} } },
          defaultSites,
          now
        )
      )
    )
    const { app, reader } = await mongoApp(t, store)

    const callbacks = await app.inject({
      url: '/v1/event-tracer/baseband-callbacks?start_time_utc=2024-05-01&end_time_utc=2024-05-02',
      headers: { authorization: reader }
    })
    t.equal(callbacks.statusCode, 200)
    const records = callbacks.json<{ event_no: number; trace: unknown }[]>()
    t.strictSame(records.map((record) => record.event_no), FIXTURE_EVENTS.slice(0, 4))
    records.forEach((record, i) => t.strictSame(record.trace, EXPECTED[i], `baseband-callbacks, event ${record.event_no}`))

    for (const [i, eventNo] of FIXTURE_EVENTS.entries()) {
      const status = await app.inject({ url: `/v1/event-tracer/event-status/${eventNo}`, headers: { authorization: reader } })
      t.equal(status.statusCode, 200, `event-status ${eventNo}`)
      t.strictSame(status.json().trace, EXPECTED[i], `event-status, event ${eventNo}`)
    }

    const stored = await store.traces.find(3_100_000_002)
    t.equal(stored?.event_no, 3_100_000_002, 'an int64 event_no reads as a plain number')
    t.equal(stored?.create_timestamp, 1714557600)
    t.notOk(stored !== null && '_id' in stored, 'no _id leaves the adapter')
  })
}

for (const backend of mongoBackends()) {
  t.test(`the first update-trace of a trace the pipeline wrote records the stored value as \`from\` (${backend.name})`, async (t) => {
    const { store, db } = await backend.open(t)
    for (const document of pipelineTraces) await db.collection('trace').insertOne({ ...document })
    const start = await store.transitions.position()
    const updates: [number, string, string | null][] = [
      [3_100_000_002, 'stages/baseband_callback_request/sites/gbo', 'not_required'],
      [310_000_004, 'stages/baseband_conversion/sites/kko', 'failed'],
      [310_000_005, 'stages/tsar_classification', null]
    ]
    for (const [eventNo, key, from] of updates) {
      t.equal(await store.traces.setStatus(eventNo, key, 'complete', 1714560000.5, 'pipeline'), true)
      t.strictSame(await store.traces.history(eventNo), [{ key, from, to: 'complete', at: 1714560000.5, by: 'pipeline' }], `event ${eventNo}`)
    }
    t.strictSame(
      (await store.transitions.since(start, 10)).transitions.map((transition) => [transition.event_no, transition.from]),
      updates.map(([eventNo, , from]) => [eventNo, from]),
      'the feed has them, with their events'
    )

    const { app, reader } = await mongoApp(t, store)
    const status = await app.inject({ url: '/v1/event-tracer/event-status/3100000002', headers: { authorization: reader } })
    t.strictSame(status.json().trace, { ...EXPECTED[1], update_timestamp: 1714560000.5 }, 'the trace reads as before; its history is not part of it')
    const stored = await store.traces.find(3_100_000_002)
    t.match(stored, { event_no: 3_100_000_002, create_timestamp: 1714557600, update_timestamp: 1714560000.5 })
    t.notOk(stored !== null && 'transitions' in stored)
  })
}
