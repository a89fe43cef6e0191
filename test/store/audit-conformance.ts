import fc from 'fast-check'
import type { Test } from 'tap'
import { auditEvent, auditFacts } from '../../src/domain/audit/audit-event.js'
import { factsOf, type EventRecords } from '../../src/domain/audit/kept-facts.js'
import { lookAt } from '../../src/domain/audit/kept-look.js'
import { auditOfReport, isFixed } from '../../src/domain/audit/kept-report.js'
import { auditedEventRecord } from '../../src/domain/audit/audited-event.js'
import type { EventRecord } from '../../src/domain/records.js'
import { parseStageDeadlines, type StageDeadlines } from '../../src/domain/stage-deadlines.js'
import type { Store } from '../../src/store/port.js'
import { PIPELINE_STAGES, STAGES, stageKey, traceKey, type Sites } from '../../src/vocabulary.js'

/** A store whose kept audit looks with `deadlines` at the clock `now`, and the same store opened again with other deadlines. */
export interface AuditStoreUnderTest {
  store: Store
  reopen(deadlines: StageDeadlines): Promise<Store>
}
export type OpenAuditStore = (t: Test, options: { sites: Sites; deadlines: StageDeadlines; now: () => number }) => Promise<AuditStoreUnderTest>

const T0 = Date.parse('2026-03-01T00:00:00Z')
const HOUR = 3_600_000
const EVENT_NOS = [1, 2, 3]

/** Everything the store holds of one event, read back through the port: what the kept audit must equal. */
async function recordsOf(store: Store, eventNo: number) {
  const parts = await store.views.eventParts(eventNo)
  return { event: parts.event, trace: parts.trace, datatrail: parts.datatrail, heartbeats: parts.heartbeats, transitions: await store.traces.history(eventNo) } satisfies EventRecords
}

type Write =
  | { kind: 'event'; eventNo: number; hoursAgo: number; sites: string[]; classification: string | null }
  | { kind: 'status'; eventNo: number; key: string; status: 'complete' | 'incomplete' }
  | { kind: 'trace'; eventNo: number; keys: string[] }
  | { kind: 'member'; eventNo: number; site: string; registered: boolean; files: number; missing: number }
  | { kind: 'heartbeat'; eventNo: number; id: number; site: string; files: number; finished: boolean; error: string | null }
  | { kind: 'history'; eventNo: number; key: string; to: 'complete' | 'incomplete'; earlier: number }
  | { kind: 'clock'; hours: number }
  | { kind: 'deadlines'; hours: number }

function writes(sites: Sites) {
  const site = fc.constantFrom(...sites.names, 'elsewhere')
  const eventNo = fc.constantFrom(...EVENT_NOS)
  const key = fc.oneof(fc.constantFrom(...sites.traceKeys), fc.constant('stages/unknown_stage/sites/chime'))
  return fc.oneof(
    fc.record({
      kind: fc.constant('event' as const),
      eventNo,
      hoursAgo: fc.integer({ min: -2, max: 80 }),
      sites: fc.subarray([...sites.names, 'elsewhere']),
      // The record's classification: classified-not-in-trace holds it against the trace.
      classification: fc.constantFrom(null, 'unclassified', 'astrophysical', 'rfi')
    }),
    fc.record({ kind: fc.constant('status' as const), eventNo, key, status: fc.constantFrom('complete' as const, 'incomplete' as const) }),
    fc.record({ kind: fc.constant('trace' as const), eventNo, keys: fc.subarray([...sites.traceKeys]) }),
    fc.record({ kind: fc.constant('member' as const), eventNo, site, registered: fc.boolean(), files: fc.integer({ min: 0, max: 3 }), missing: fc.integer({ min: 0, max: 2 }) }),
    fc.record({
      kind: fc.constant('heartbeat' as const),
      eventNo,
      id: fc.integer({ min: 0, max: 40 }),
      site,
      files: fc.integer({ min: 0, max: 3 }),
      finished: fc.boolean(),
      error: fc.constantFrom(null, '', 'disk full')
    }),
    // History imported as it stood elsewhere (tracer import): completions at any time, earlier ones included.
    fc.record({ kind: fc.constant('history' as const), eventNo, key, to: fc.constantFrom('complete' as const, 'incomplete' as const), earlier: fc.integer({ min: 0, max: 50 }) }),
    fc.record({ kind: fc.constant('clock' as const), hours: fc.integer({ min: 0, max: 30 }) }),
    fc.record({ kind: fc.constant('deadlines' as const), hours: fc.integer({ min: 1, max: 20 }) })
  )
}

/** An event at `time` asking for baseband data from the sites in `want` (a name not configured as is). */
export function event(eventNo: number, time: number, want: string[], sites: Sites, classification: string | null = null): EventRecord {
  const flags = Object.fromEntries(want.map((site) => [sites.includes(site) ? sites.basebandKeyOf(site) : `${site}_baseband`, true]))
  return {
    event_no: eventNo,
    timestamp: time,
    snr: 12.5,
    dm: null,
    known_source_name: 'FRB',
    tsar_classification: classification,
    actions: { want: flags, got: {} },
    baseband_requested: want.length > 0,
    update_timestamp: time / 1000
  }
}

/**
 * The kept audit against the audit made again from the records, over random histories of writes
 * of every kind, moves of the clock and changes of the deadlines: after the deadline scheduler's
 * step (`due`, then `settle`), each event's kept facts equal those made from its records, its kept
 * look equals the look at them now, and the audit read from the kept facts equals the reference
 * audit of the records.
 */
export function auditConformance(t: Test, open: OpenAuditStore, sites: Sites) {
  t.test('the kept audit equals the audit recomputed from the records, whatever the history', async (t) => {
    await fc.assert(
      fc.asyncProperty(fc.array(writes(sites), { minLength: 1, maxLength: 40 }), async (history: Write[]) => {
        let now = T0
        let deadlines = parseStageDeadlines(PIPELINE_STAGES.map((stage) => `${stage}=2h`).join(','))
        const opened = await open(t, { sites, deadlines, now: () => now })
        let store = opened.store
        let at = T0 / 1000
        for (const write of history) {
          at += 1
          switch (write.kind) {
            case 'event':
              await store.events.upsert([event(write.eventNo, now - write.hoursAgo * HOUR, write.sites, sites, write.classification)])
              break
            case 'status':
              await store.traces.setStatus(write.eventNo, write.key, write.status, at, 'writer')
              break
            case 'trace': {
              const trace: Record<string, unknown> = { event_no: write.eventNo, create_timestamp: at, update_timestamp: at }
              for (const key of sites.traceKeys) trace[key] = write.keys.includes(key) ? 'complete' : 'incomplete'
              await store.traces.upsert([trace])
              break
            }
            case 'member': {
              const member = sites.includes(write.site) ? sites.basebandKeyOf(write.site) : 'intensity'
              const value = { registered: write.registered, num_files: write.files, missing_files: Array.from({ length: write.missing }, (_, i) => `f${i}`) }
              await store.datatrail.put([{ event_no: write.eventNo, member, value, update_timestamp: at }])
              break
            }
            case 'heartbeat':
              await store.heartbeats.add(
                [
                  {
                    event_no: write.eventNo,
                    heartbeat_id: write.id,
                    site: write.site,
                    sent: { trigger_time: '2026-03-01T00:00:05Z', error: write.error },
                    received: { total_data_files: write.files, dir_size_gb: 1, finished_time: write.finished ? '2026-03-01T01:00:00Z' : null, heartbeat_sent_unix_s: at }
                  }
                ],
                at
              )
              break
            case 'history':
              await store.traces.record([{ event_no: write.eventNo, key: write.key, from: null, to: write.to, at: at - write.earlier * 600, by: 'import' }])
              break
            case 'clock':
              now += write.hours * HOUR
              break
            case 'deadlines':
              deadlines = parseStageDeadlines(`baseband_conversion=${write.hours}h,data_registration=${write.hours + 1}h`)
              store = await opened.reopen(deadlines)
              break
          }
        }
        await store.audits.settle(await store.audits.due(now, 1000), now)
        const settings = { sites, deadlines, now }
        t.strictSame((await store.audits.check(EVENT_NOS, now)).mismatches, [], 'nothing a read serves differs from the records')
        for (const eventNo of EVENT_NOS) {
          const records = await recordsOf(store, eventNo)
          const kept = await store.audits.find(eventNo)
          const recomputed = factsOf(eventNo, records, sites)
          if (records.event?.baseband_requested !== true) {
            t.equal(kept, null, `event ${eventNo}: not in the audit, nothing to find`)
            continue
          }
          t.strictSame(kept?.facts, recomputed, `event ${eventNo}: kept facts`)
          t.strictSame(kept?.look, lookAt(recomputed, settings).look, `event ${eventNo}: kept look`)
          if (records.event !== null && kept?.facts.event != null) {
            const reference = auditEvent({ ...records, event: records.event }, settings)
            t.strictSame(auditFacts(kept.facts, kept.facts.event, settings), reference, `event ${eventNo}: audit of the kept facts`)
            if (records.event.baseband_requested) {
              const window = await store.audits.windowPage({ start: records.event.timestamp, end: records.event.timestamp + 1 }, undefined, 10)
              const entry = window.find((candidate) => candidate.event_no === eventNo)
              const read = entry === undefined ? undefined : isFixed(entry) ? JSON.parse(entry.json) : auditedEventRecord({ event_no: eventNo, ...entry.event }, auditOfReport(entry, settings))
              t.strictSame(read, auditedEventRecord(records.event, reference), `event ${eventNo}: the audit a window reads`)
              if (entry !== undefined && isFixed(entry)) t.equal(entry.verdict, reference.verdict, `event ${eventNo}: the fixed audit's verdict`)
            }
          }
        }
        return true
      }),
      { numRuns: 60 }
    )
  })

  t.test('the window reads the listed events in (event time, event_no) order; due lists passed deadlines', async (t) => {
    const now = T0
    const { store } = await open(t, { sites, deadlines: parseStageDeadlines('baseband_callback_request=1h'), now: () => now })
    // A feed's positions are its own (on MongoDB, per instance, from its first read): taken before the writes.
    const position = await store.verdictChanges.position()
    await store.events.upsert([event(5, T0 - 3 * HOUR, [sites.names[0]!], sites), event(4, T0 - 3 * HOUR, [sites.names[0]!], sites), event(6, T0 - HOUR / 2, [], sites)])
    const page = await store.audits.windowPage({ start: T0 - 4 * HOUR, end: T0 }, undefined, 10)
    t.strictSame(page.map((report) => report.event_no), [4, 5], 'only events asking for baseband data, by time then number')
    t.strictSame((await store.audits.windowPage({ start: T0 - 4 * HOUR, end: T0 }, { timestamp: T0 - 3 * HOUR, event_no: 4 }, 10)).map((report) => report.event_no), [5])
    const { look } = (await store.audits.find(4))!
    t.equal(look.verdict, 'stuck', 'the callback request is three hours late')
    t.ok(look.due_at! > now, 'the next deadline is ahead')
    t.strictSame(await store.audits.due(now, 10), [], 'nothing due yet')
    const later = look.due_at!
    t.strictSame((await store.audits.due(later, 10)).sort(), [4, 5], 'both events are due at their next deadline')
    const changes = await store.audits.settle([4, 5], later)
    t.equal(changes.length, 2, 'each change is recorded')
    t.ok(changes.every((change) => change.from === 'stuck' && change.to === 'stuck' && change.became_stuck.length > 0), 'stages that became stuck are named')
    t.strictSame(await store.audits.settle([4, 5], later), [], 'settling again changes nothing')
    const fed = await store.verdictChanges.since(position, 100)
    t.ok(fed.items.some((change) => change.event_no === 4 && change.from === null && change.to === 'stuck'), 'the feed has the event entering the audit')
    t.equal(fed.items.filter((change) => change.became_stuck.length > 0 && change.from === 'stuck').length, 2, 'and the deadline changes')
    t.equal(await store.verdictChanges.position(), fed.position)
  })

  t.test('an event with a long history, its first completions deep inside it: the kept audit is the one all its records make', async (t) => {
    const now = T0 + 3 * HOUR
    const deadlines = parseStageDeadlines(PIPELINE_STAGES.map((stage) => `${stage}=2h`).join(','))
    const settings = { sites, deadlines, now }
    const { store } = await open(t, { sites, deadlines, now: () => now })
    const eventNo = 9
    await store.events.upsert([event(eventNo, T0, [...sites.names], sites)])
    await store.traces.create(eventNo, T0 / 1000)
    // Imported history, completions at times going down and up (some before the event), then update-trace on top.
    for (let start = 0; start < 2000; start += 500) {
      const batch = Array.from({ length: 500 }, (_, i) => start + i).map((n) => ({
        event_no: eventNo,
        key: sites.traceKeys[n % sites.traceKeys.length]!,
        from: null,
        to: n % 3 === 0 ? ('complete' as const) : ('incomplete' as const),
        at: T0 / 1000 - 600 + ((n * 7919) % 2000),
        by: 'import'
      }))
      await store.traces.record(batch)
    }
    for (const [i, key] of sites.traceKeys.slice(0, 5).entries()) await store.traces.setStatus(eventNo, key, 'complete', T0 / 1000 + 60 * i, 'pipeline')
    const records = await recordsOf(store, eventNo)
    t.equal(records.transitions.length, 2005)
    const kept = await store.audits.find(eventNo)
    t.strictSame(kept?.facts, factsOf(eventNo, records, sites), 'the kept facts are those of every transition')
    t.strictSame(kept?.look, lookAt(kept!.facts, settings).look, 'the kept look')
    t.strictSame(auditFacts(kept!.facts, kept!.facts.event!, settings), auditEvent({ ...records, event: records.event! }, settings), 'the audit, verdict and findings')
    t.strictSame((await store.audits.check([eventNo], now)).mismatches, [], 'nothing a read serves differs from the records')
  })

  t.test('verify finds nothing to repair in a store written only through the port', async (t) => {
    const { store } = await open(t, { sites, deadlines: parseStageDeadlines('baseband_callback_request=1h'), now: () => T0 })
    await store.events.upsert([event(7, T0, [sites.names[0]!], sites)])
    await store.traces.setStatus(7, stageKey(STAGES[0], sites.names[0]!), 'complete', T0 / 1000, 'w')
    await store.traces.setStatus(8, traceKey('tsar_classification', sites.names[0]!), 'complete', T0 / 1000, 'w')
    const result = await store.audits.verify(-1, 100, T0)
    t.strictSame(result.mismatches, [])
    t.equal(result.last, null, 'the last page')
    const first = await store.audits.verify(-1, 1, T0)
    t.strictSame([first.checked, first.last], [1, 7], 'a page of one: the event in the audit, first in event_no order')
  })
}
