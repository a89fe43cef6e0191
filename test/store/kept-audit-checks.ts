import type { Test } from 'tap'
import { lookAt } from '../../src/domain/audit/kept-look.js'
import { WindowAudit } from '../../src/domain/audit/window-audit.js'
import { parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import type { KeptColumn, KeptColumnRepair } from '../../src/kept-audit/storage.js'
import type { Store } from '../../src/store/port.js'
import { STAGES, stageKey, type Sites } from '../../src/vocabulary.js'
import { event as eventAsking, type AuditStoreUnderTest } from './audit-conformance.js'

/**
 * Changes a kept audit the way another program (or a bug, or a hand edit) could: straight into the
 * SQLite file or the MongoDB collection, never through the port.
 */
export interface Tamper {
  /** The kept row of an event made to serve `complete`, with no findings, to every read but a recomputation. */
  serveComplete(eventNo: number): Promise<void>
  /** The row's facts made something that is not facts. */
  breakFacts(eventNo: number): Promise<void>
  /** The row's window entry made something that is not a report. */
  breakReport(eventNo: number): Promise<void>
  /**
   * Hand edits of the columns the store keeps in its record tables beside the records they are made
   * from, one a column (none where the store keeps none: MongoDB makes its output texts as it reads).
   * Each changes what the event of the suite's events serves: its source name, its trace, or whether
   * it asks for baseband data.
   */
  keptColumns: readonly { column: KeptColumn; edit: (eventNo: number) => Promise<void> }[]
}

export type OpenTamperableStore = (
  t: Test,
  options: { sites: Sites; deadlines: ReturnType<typeof parseStageDeadlines>; now: () => number }
) => Promise<AuditStoreUnderTest & { tamper: Tamper }>

const T0 = Date.parse('2026-03-01T00:00:00Z')
const SECOND = 1000
const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Every stage 2 h after the event, the classification 1 h. */
const DEADLINES = parseStageDeadlines([...STAGES.map((stage) => `${stage}=2h`), 'tsar_classification=1h'].join(','))

const event = (eventNo: number, time: number, site: string, sites: Sites) => eventAsking(eventNo, time, [site], sites)

/** What a window read serves of the whole store at `now`: each event's verdict, by event_no. */
async function servedVerdicts(store: Store, now: number, sites: Sites) {
  const audit = new WindowAudit({ sites, deadlines: DEADLINES, now })
  const listed = audit.page(await store.audits.windowPage({ start: T0 - DAY, end: T0 + DAY }, undefined, 100))
  return Object.fromEntries(listed.map((event) => (typeof event === 'string' ? (JSON.parse(event) as { event_no: number; verdict: string }) : event)).map((event) => [event.event_no, event.verdict]))
}

/**
 * The kept audit is checked in everything a read serves, and no one row can stop the others: held
 * to the same promises on every adapter, with the rows changed behind the store's back.
 */
export function keptAuditChecks(t: Test, open: OpenTamperableStore, sites: Sites) {
  const site = sites.names[0]!

  t.test('a kept row made to serve another verdict is found, repaired, and serves the records’ audit again', async (t) => {
    const now = T0
    const { store, tamper } = await open(t, { sites, deadlines: DEADLINES, now: () => now })
    const position = await store.verdictChanges.position()
    await store.events.upsert([event(11, T0 - 3 * HOUR, site, sites), event(12, T0 - 3 * HOUR, site, sites)])
    for (const eventNo of [11, 12]) {
      await store.traces.setStatus(eventNo, 'stages/tsar_classification', 'complete', T0 / 1000 - 600, 'w')
      for (const stage of STAGES) await store.traces.setStatus(eventNo, stageKey(stage, site), 'complete', T0 / 1000 - 600, 'w')
    }
    // Replicated while the datatrail still misses a file: a contradiction no clock changes.
    await store.datatrail.put([{ event_no: 11, member: sites.basebandKeyOf(site), value: { registered: true, num_files: 2, missing_files: ['f1'] }, update_timestamp: T0 / 1000 }])
    await store.datatrail.put([{ event_no: 12, member: sites.basebandKeyOf(site), value: { registered: true, num_files: 2, missing_files: [] }, update_timestamp: T0 / 1000 }])
    t.strictSame((await store.audits.verify(-1, 100, now)).mismatches, [], 'written through the port: nothing differs')
    t.strictSame(await servedVerdicts(store, now, sites), { 11: 'contradiction', 12: 'complete' })

    await tamper.serveComplete(11)
    t.strictSame(await servedVerdicts(store, now, sites), { 11: 'complete', 12: 'complete' }, 'the window serves the changed row')

    const found = await store.audits.verify(-1, 100, now)
    t.equal(found.checked, 2)
    t.strictSame(found.mismatches.map((mismatch) => mismatch.event_no), [11], 'verify finds the row whose facts are right but whose served verdict is not')
    t.ok(found.mismatches[0]!.parts.includes('record'), `the record a window serves is named among the parts (${found.mismatches[0]!.parts.join(', ')})`)
    t.strictSame(await servedVerdicts(store, now, sites), { 11: 'contradiction', 12: 'complete' }, 'repaired: the window serves the records’ verdict')
    t.equal((await store.audits.find(11))?.look.verdict, 'contradiction')
    t.strictSame((await store.audits.verify(-1, 100, now)).mismatches, [], 'and nothing differs any more')
    const fed = await store.verdictChanges.since(position, 100)
    t.ok(
      fed.items.some((change) => change.event_no === 11 && change.from === 'complete' && change.to === 'contradiction'),
      'the correction is a verdict change, for the live streams'
    )

    await tamper.serveComplete(11)
    const checked = await store.audits.check([11, 12], now)
    t.strictSame(checked.mismatches.map((mismatch) => mismatch.event_no), [11], 'check holds the named events alike')
  })

  t.test('a check that may not repair names what differs and writes nothing', async (t) => {
    const now = T0
    const { store, tamper } = await open(t, { sites, deadlines: DEADLINES, now: () => now })
    await store.events.upsert([event(13, T0 - 3 * HOUR, site, sites), event(14, T0 - 3 * HOUR, site, sites)])
    await store.traces.setStatus(13, 'stages/tsar_classification', 'complete', T0 / 1000 - 600, 'w')
    await store.traces.setStatus(14, 'stages/tsar_classification', 'complete', T0 / 1000 - 600, 'w')
    const served = await servedVerdicts(store, now, sites)
    t.strictSame(served, { 13: 'stuck', 14: 'stuck' })
    await tamper.serveComplete(13)
    const edited = tamper.keptColumns[0]
    await edited?.edit(14)
    const found = await store.audits.check([13, 14], now, { repair: false })
    t.strictSame(found.mismatches.map((mismatch) => mismatch.event_no), [13], 'the kept audit that differs is named')
    t.strictSame(found.mismatches[0]!.parts, ['record'], 'with the part a window serves (the look, made with the store’s deadlines, is left out)')
    t.strictSame(found.columns, edited === undefined ? [] : [{ event_no: 14, column: edited.column }], 'and so is a kept column that differs')
    t.strictSame(await servedVerdicts(store, now, sites), { ...served, 13: 'complete' }, 'nothing was repaired')
    t.equal((await store.audits.find(13))?.look.verdict, 'complete')
    const again = await store.audits.check([13, 14], now, { repair: false })
    t.strictSame([again.mismatches.map((mismatch) => mismatch.event_no), again.columns], [[13], found.columns], 'a second look finds the same')
    const repaired = await store.audits.check([13, 14], now)
    t.strictSame([repaired.mismatches.map((mismatch) => mismatch.event_no), repaired.columns], [[13], found.columns], 'a check that repairs names the same')
    t.strictSame(await servedVerdicts(store, now, sites), served)
  })

  t.test('a column kept beside a record and edited by hand is found, named and repaired, and every read serves the records again', async (t) => {
    const now = T0
    const { store, tamper } = await open(t, { sites, deadlines: DEADLINES, now: () => now })
    const window = { start: T0 - DAY, end: T0 + DAY }
    const edits = tamper.keptColumns.map((edit, index) => ({ ...edit, eventNo: 51 + index }))
    for (const { eventNo } of [...edits, { eventNo: 50 }]) {
      await store.events.upsert([event(eventNo, T0 - 3 * HOUR + eventNo, site, sites)])
      await store.traces.setStatus(eventNo, 'stages/tsar_classification', 'complete', T0 / 1000 - 600, 'w')
      await store.traces.setStatus(eventNo, stageKey(STAGES[0], site), 'complete', T0 / 1000 - 600, 'w')
    }
    const served = async () => ({
      events: (await store.events.page({ window, order: 'asc', limit: 100 })).map((row) => JSON.parse(row.json) as unknown),
      callbacks: (await store.views.callbackPage(window, undefined, 100)).map((row) => JSON.parse(row.json) as unknown),
      audit: await servedVerdicts(store, now, sites),
      verdicts: await Promise.all([50, ...edits.map(({ eventNo }) => eventNo)].map(async (eventNo) => (await store.audits.find(eventNo))?.look.verdict))
    })
    const right = await served()
    t.equal(right.callbacks.length, edits.length + 1, 'every event asks for baseband data')
    t.strictSame((await store.audits.verify(-1, 100, now)).columns, [], 'written through the port: no kept column differs')

    for (const { edit, eventNo } of edits) await edit(eventNo)
    if (edits.length > 0) t.notSame(await served(), right, 'the edited columns are served')
    const withoutTexts = await store.audits.verify(-1, 100, now, { texts: false })
    t.strictSame(withoutTexts.columns.filter(({ column }) => column !== 'record_counts.heartbeat_count'), [], 'a pass without the texts leaves them to the next that has them')

    const found = await store.audits.verify(-1, 100, now)
    const byEvent = (a: KeptColumnRepair, b: KeptColumnRepair) => a.event_no - b.event_no
    t.strictSame(found.columns.sort(byEvent), edits.map(({ eventNo, column }) => ({ event_no: eventNo, column })), 'each edited column is found and named, and none else')
    t.strictSame(found.mismatches, [], 'the kept audit agrees with the records: a flag cleared by hand takes no event out of the audit')
    t.strictSame(await served(), right, 'repaired: every read serves what the records make')
    t.strictSame((await store.audits.verify(-1, 100, now)).columns, [], 'and a second pass finds nothing')
  })

  t.test('a row that cannot be read holds back no deadline and is repaired from its records', async (t) => {
    let now = T0
    const { store, tamper } = await open(t, { sites, deadlines: DEADLINES, now: () => now })
    await store.events.upsert([event(21, T0, site, sites), event(22, T0, site, sites), event(23, T0, site, sites)])
    await tamper.breakFacts(21)
    now = T0 + HOUR
    t.strictSame([...(await store.audits.due(now, 10))].sort(), [21, 22, 23], 'the classification deadline passed for all three')
    const unreadable: number[] = []
    const changes = await store.audits.settle([21, 22, 23], now, (eventNo) => unreadable.push(eventNo))
    t.strictSame(unreadable, [21], 'the row that cannot be read is passed over and told')
    t.strictSame(
      changes.map((change) => [change.event_no, change.to]),
      [
        [22, 'stuck'],
        [23, 'stuck']
      ],
      'the others turn stuck on time'
    )
    const repaired = await store.audits.check(unreadable, now)
    t.strictSame(repaired.mismatches.map((mismatch) => mismatch.event_no), [21], 'checked against its records, it differs')
    t.strictSame(repaired.unreadable, [])
    const kept = await store.audits.find(21)
    t.strictSame(kept?.look, lookAt(kept!.facts, { sites, deadlines: DEADLINES, now }).look, 'and is kept as its records say')
    t.equal(kept?.look.verdict, 'stuck')

    await tamper.breakFacts(23)
    await store.traces.setStatus(23, stageKey(STAGES[0], site), 'complete', now / 1000, 'w')
    t.strictSame((await store.audits.check([23], now)).mismatches, [], 'a write to an event whose row cannot be read fails not, and makes the row again')
    t.equal((await store.audits.find(23))?.facts.sites[site]?.stages[STAGES[0]], 'complete')

    await tamper.breakReport(22)
    t.strictSame(await servedVerdicts(store, now, sites), { 21: 'stuck', 22: 'stuck', 23: 'stuck' }, 'a window read makes a broken entry from its records')
    t.strictSame((await store.audits.verify(-1, 100, now)).mismatches.map((mismatch) => mismatch.event_no), [22], 'and the verifier repairs it')
    t.strictSame((await store.audits.verify(-1, 100, now)).mismatches, [])
  })

  t.test('an event that stops asking for a site, and stays in the audit, is a change that names the site it left', async (t) => {
    const now = T0
    const { store } = await open(t, { sites, deadlines: DEADLINES, now: () => now })
    const [first, second] = sites.names
    const asking = (want: string[]) => eventAsking(41, T0, want, sites)
    await store.events.upsert([asking([first!, second!])])
    const position = await store.verdictChanges.position()
    await store.events.upsert([asking([first!])])
    const fed = await store.verdictChanges.since(position, 10)
    t.match(fed.items, [{ event_no: 41, from: 'in_progress', to: 'in_progress', left_sites: [second] }], 'a stream filtered by that site hears it leave')
    t.strictSame(fed.items[0]?.audit?.sites, [first])
  })

  t.test('a look made under a clock that moved back is made again, and the stage is announced stuck at its real deadline', async (t) => {
    const eventTime = T0 - 60 * SECOND
    let now = T0
    const { store } = await open(t, { sites, deadlines: DEADLINES, now: () => now })
    const position = await store.verdictChanges.position()
    await store.events.upsert([event(31, eventTime, site, sites)])

    // The host's clock steps a day forward, and back four seconds later (an NTP correction).
    now = T0 + DAY
    t.strictSame(await store.audits.due(now, 10), [31])
    const ahead = await store.audits.settle([31], now)
    t.equal(ahead[0]?.to, 'stuck', 'under the later clock, every stage turned stuck')
    now = T0 + 4 * SECOND
    t.strictSame(await store.audits.due(now, 10), [31], 'back on time, the look made under the later clock is due again')
    const corrected = await store.audits.settle([31], now)
    t.match(corrected, [{ event_no: 31, from: 'stuck', to: 'in_progress', became_stuck: [] }], 'and corrected on the stream')
    const kept = await store.audits.find(31)
    t.strictSame(kept?.look, lookAt(kept!.facts, { sites, deadlines: DEADLINES, now }).look, 'the kept look is the look now')
    t.strictSame(await store.audits.due(now, 10), [], 'nothing is due until the real deadline')
    t.strictSame((await store.audits.check([31], now)).mismatches, [])

    now = eventTime + HOUR
    t.strictSame(await store.audits.due(now, 10), [31])
    const stuck = await store.audits.settle([31], now)
    t.match(stuck, [{ event_no: 31, from: 'in_progress', to: 'stuck', became_stuck: [{ site: null, stage: 'tsar_classification' }] }], 'announced again when the deadline passes by the clock of the announcement')
    const fed = await store.verdictChanges.since(position, 100)
    t.strictSame(
      fed.items.map((change) => [change.from, change.to]),
      [
        [null, 'in_progress'],
        ['in_progress', 'stuck'],
        ['stuck', 'in_progress'],
        ['in_progress', 'stuck']
      ]
    )
  })
}
