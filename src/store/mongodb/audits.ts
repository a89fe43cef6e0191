import type { Collection, Db, Document, Filter } from 'mongodb'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { EventPosition } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Adapter } from '../guarded-store.js'
import type { AuditCheck, AuditCollection, AuditMarks, KeptAudit } from '../port.js'
import type { KeptFacts } from '../../domain/audit/kept-facts.js'
import { isKeptReport, isUnreadableContent, keptDifferences, LOOK_CLOCK_TOLERANCE_MS, reportedParts, type KeptPart } from '../../domain/audit/kept-check.js'
import { keptAudit } from './audit-documents.js'
import { reportOf, type KeptReport } from '../../domain/audit/kept-report.js'
import type { AuditKeeper } from './audit-keeper.js'
import type { AuditRecords } from './audit-records.js'
import { numberIn, plain } from './documents.js'
import { COLLECTIONS } from './indexes.js'

/**
 * The keyset condition of one window page in (event_time, event_no) order, as keysetFilter (event-pages.ts)
 * writes it for events: a time range plus an $or for ties, so that the {listed, event_time, event_no}
 * index gives a range scan in the order returned.
 */
function windowFilter(window: TimeWindow, after: EventPosition | undefined): Filter<Document> {
  if (after === undefined) return { listed: true, event_time: { $gte: window.start, $lt: window.end } }
  return {
    listed: true,
    event_time: { $gte: after.timestamp, $lt: window.end },
    $or: [{ event_time: { $gt: after.timestamp } }, { event_no: { $gt: after.event_no } }]
  }
}

/**
 * The kept audit on MongoDB: reads are one document or one index range of the `audit` collection;
 * writes go through the AuditKeeper, each a compare-and-set of one document. Unlike SQLite, `settle`
 * and `verify` are not one transaction: each event is written on its own, and a concurrent writer
 * of the same event makes the write start again from a fresh read rather than be lost.
 */
export class MongoAudits implements Adapter<AuditCollection> {
  private readonly audits: Collection

  constructor(
    db: Db,
    private readonly keeper: AuditKeeper,
    private readonly records: AuditRecords
  ) {
    this.audits = db.collection(COLLECTIONS.audit)
  }

  /** The keeper keeps the facts of every event with a record; the port shows those of the events in the audit. */
  async find(eventNo: number): Promise<KeptAudit | null> {
    const kept = (await this.keeper.kept([eventNo])).get(eventNo)
    return kept === undefined || kept.facts.event?.listed !== true ? null : keptAudit(kept)
  }

  async windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<KeptReport[]> {
    const documents = await this.audits
      .find(windowFilter(window, after), { projection: { _id: 0, event_no: 1, event_time: 1, report: 1 }, sort: { event_time: 1, event_no: 1 }, limit })
      .toArray()
    const reports = documents.map((document) => plain(document.report))
    if (reports.every(isKeptReport)) return reports
    // A document whose report is not one (another program wrote it) is made from its records instead, in
    // its place: one bad document costs the window nothing, and the verifier repairs the document itself.
    const eventNos = documents.map((document) => numberIn(document.event_no, Number.NaN))
    const records = await this.records.of(eventNos.filter((_, index) => !isKeptReport(reports[index])))
    const page = reports.flatMap((report, index) => {
      if (isKeptReport(report)) return [report]
      const made = reportOf(this.keeper.factsOf(eventNos[index]!, records.get(eventNos[index]!)!), this.keeper.config.sites)
      return made === null ? [] : [made]
    })
    // One left out (its event is no longer in the audit) is made up for by the next: a short page would end the window's read.
    if (page.length === documents.length || documents.length < limit) return page
    const last = documents.at(-1)!
    const more = await this.windowPage(window, { timestamp: numberIn(last.event_time, Number.NaN), event_no: eventNos.at(-1)! }, limit - page.length)
    return [...page, ...more]
  }


  /** `$ne: null` keeps out the documents with nothing due, which a server's type brackets would too. */
  async due(now: number, limit: number): Promise<number[]> {
    const numbers = (documents: Document[]) => documents.map((document) => numberIn(document.event_no, Number.NaN)).filter((eventNo) => !Number.isNaN(eventNo))
    const projection = { _id: 0, event_no: 1 }
    const ahead = numbers(await this.audits.find({ looked_at: { $gt: now + LOOK_CLOCK_TOLERANCE_MS } }, { projection, sort: { looked_at: -1 }, limit }).toArray())
    if (ahead.length === limit) return ahead
    const due = numbers(await this.audits.find({ due_at: { $ne: null, $lte: now } }, { projection, sort: { due_at: 1 }, limit }).toArray())
    return [...ahead, ...due.filter((eventNo) => !ahead.includes(eventNo))].slice(0, limit)
  }

  /** One event at a time, each a compare-and-set: of several instances settling one event, the winner records its change. */
  async settle(eventNos: readonly number[], now: number, unreadable?: (eventNo: number) => void): Promise<VerdictChange[]> {
    const changes: VerdictChange[] = []
    for (const eventNo of eventNos) {
      try {
        const change = await this.keeper.relook(eventNo, now)
        if (change !== null) changes.push(change)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        unreadable?.(eventNo)
      }
    }
    return changes
  }

  /**
   * The documents of the events held against their records now, in every part a read serves; each
   * that differs is reported, then brought up to date by the keeper (which reads both again, so a
   * write that landed in between is not undone), unless `repair` is false (then the look is left
   * out: see LOOK_PARTS). The record collections keep no column made from the records (the output
   * texts are made as they are read): `columns` is always empty.
   */
  async check(eventNos: readonly number[], now: number, { repair = true }: { repair?: boolean } = {}): Promise<AuditCheck> {
    const kept = await this.keeper.kept(eventNos)
    const records = await this.records.of(eventNos)
    const settings = this.keeper.settings(now)
    const result: AuditCheck = { mismatches: [], unreadable: [], columns: [] }
    for (const eventNo of eventNos) {
      let recomputed: KeptFacts
      try {
        recomputed = this.keeper.factsOf(eventNo, records.get(eventNo)!)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        result.unreadable.push({ event_no: eventNo, error: error instanceof Error ? error.message : String(error) })
        continue
      }
      const document = kept.get(eventNo) ?? null
      let parts: KeptPart[]
      try {
        parts = keptDifferences(document, recomputed, settings)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        parts = ['row']
      }
      // The keeper keeps a document of every event with a record, in the audit or not.
      if (document === null && parts.length === 0 && records.get(eventNo)!.any) parts = ['row']
      if (!repair) parts = reportedParts(parts)
      if (parts.length > 0) result.mismatches.push({ event_no: eventNo, parts, kept: document?.facts ?? null, recomputed })
    }
    if (!repair) return result
    await this.keeper.keep(
      result.mismatches.map((mismatch) => mismatch.event_no),
      now
    )
    return result
  }

  /** The collection's own estimate (its metadata, no scan): documents of events outside the audit count too. */
  async size(): Promise<number> {
    return this.audits.estimatedDocumentCount()
  }

  async verify(after: number, limit: number, now: number): Promise<AuditCheck & { checked: number; last: number | null }> {
    const eventNos = await this.records.eventNumbersAfter(after, limit)
    // No count is kept here either: the server counts an event's heartbeats on each read.
    return { ...(await this.check(eventNos, now)), checked: eventNos.length, last: eventNos.length < limit ? null : eventNos.at(-1)! }
  }

  /** Nothing is marked: the change-stream watcher (audit-watcher.ts) keeps the audit after other programs' writes already. */
  async marked(_limit: number): Promise<AuditMarks> {
    return { eventNos: [], upTo: 0 }
  }

  async unmark(_upTo: number): Promise<void> {}
}
