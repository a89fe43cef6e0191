import type { Collection, Db, Document } from 'mongodb'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { AuditSettings } from '../../domain/audit/audit-event.js'
import { factsOf, type KeptFacts } from '../../domain/audit/kept-facts.js'
import { beforeOf, OUTSIDE, relooked, remade } from '../../domain/audit/keeping.js'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import type { Sites } from '../../vocabulary.js'
import { StoreUnavailableError } from '../port.js'
import { asStored, factFields, KEPT_ONLY, keptIn, lookFields, type KeptDocument } from './audit-documents.js'
import { isUnreadableContent, keptDifferences } from '../../domain/audit/kept-check.js'
import type { AuditRecords, StoredRecords } from './audit-records.js'
import { isDuplicateKey } from './driver-errors.js'
import { numberIn } from './documents.js'
import { COLLECTIONS } from './indexes.js'

/**
 * Rounds of one recompute before it gives up with 503. A round is lost only to another writer of
 * the same event's audit that wrote between this round's read and its write; each such writer
 * started later and read records at least as new, so losing this many takes a flood of writes of one event.
 */
export const AUDIT_WRITE_ATTEMPTS = 10
/** Events recomputed together: the `$in` of each read, and one bulk write. */
const EVENTS_PER_ROUND = 500

/** What the kept audit is made with: the configured sites and deadlines, and the store's clock (ms). */
export interface AuditConfig {
  sites: Sites
  deadlines: StageDeadlines
  clock: () => number
}

/** One conditional write of an audit document. */
interface AuditWrite {
  eventNo: number
  filter: Document
  update: Document
  /** Only where no document was read: the write creates it, or meets E11000 when another writer did first. */
  upsert: boolean
}

/**
 * Whether a document serves what the records make, in every part (kept-check.ts): a document whose
 * facts are right but whose report, verdict or stuck stages are not is written again. A document
 * whose content cannot be read does not agree.
 */
function agrees(kept: KeptDocument, facts: KeptFacts, settings: AuditSettings): boolean {
  try {
    return keptDifferences(kept, facts, settings).length === 0
  } catch (error) {
    if (isUnreadableContent(error)) return false
    throw error
  }
}

/** The condition a write holds the document to: the revision read, or no document (nor revision) yet. */
const sameRevision = (eventNo: number, rev: number | undefined) => ({ event_no: eventNo, rev: rev === undefined ? { $exists: false } : { $eq: rev } })

/**
 * Keeps each event's audit document equal to what its records say, without a transaction. After a
 * write lands, the writer calls `keep` with the events it touched: the audit documents are read,
 * then the records, the facts made again from them (factsOf) and looked at (remade, keeping.ts); where the
 * facts or the look differ from the document, it is written with a compare-and-set on `rev`, with
 * the verdict change in the same update. A round that loses (another writer moved `rev`, or created
 * the document first: E11000) reads everything again. Making the facts from the records rather than
 * applying the write to them is what makes writers through several instances converge: the audit
 * document was read before the records, so the write that wins last was made from records read
 * after every write acknowledged before that read; whatever landed later has a recompute of its own
 * still to come. An idempotent re-write finds nothing to change and costs the reads only.
 */
export class AuditKeeper {
  private readonly audits: Collection

  constructor(
    db: Db,
    private readonly records: AuditRecords,
    readonly config: AuditConfig
  ) {
    this.audits = db.collection(COLLECTIONS.audit)
  }

  settings(now = this.config.clock()): AuditSettings {
    return { sites: this.config.sites, deadlines: this.config.deadlines, now }
  }

  /** The audit documents of some events, by event_no. */
  async kept(eventNos: readonly number[]): Promise<Map<number, KeptDocument>> {
    const found = new Map<number, KeptDocument>()
    if (eventNos.length === 0) return found
    const documents =
      eventNos.length === 1
        ? [await this.audits.findOne({ event_no: eventNos[0] }, KEPT_ONLY)].filter((document) => document !== null)
        : await this.audits.find({ event_no: { $in: [...eventNos] } }, KEPT_ONLY).toArray()
    for (const document of documents) found.set(numberIn(document.event_no, Number.NaN), keptIn(document))
    return found
  }

  /** The facts the records make, in the form they are stored in. */
  factsOf(eventNo: number, records: StoredRecords): KeptFacts {
    return asStored(factsOf(eventNo, records, this.config.sites))
  }

  /**
   * Brings the audit of each event up to date with its records, looked at `now` (the store's clock
   * by default). Rejects with StoreUnavailableError when other writers kept winning.
   */
  async keep(eventNos: Iterable<number>, now?: number): Promise<void> {
    const all = [...new Set(eventNos)]
    for (let start = 0; start < all.length; start += EVENTS_PER_ROUND) await this.keepRound(all.slice(start, start + EVENTS_PER_ROUND), now)
  }

  private async keepRound(eventNos: number[], now: number | undefined): Promise<void> {
    let pending = eventNos
    for (let attempt = 0; attempt < AUDIT_WRITE_ATTEMPTS && pending.length > 0; attempt++) {
      // The documents first, then the records: see the class comment.
      const kept = await this.kept(pending)
      const records = await this.records.of(pending)
      const settings = this.settings(now)
      const writes: AuditWrite[] = []
      for (const eventNo of pending) {
        const write = this.recomputed(eventNo, kept.get(eventNo), records.get(eventNo)!, settings)
        if (write !== null) writes.push(write)
      }
      pending = await this.write(writes)
    }
    if (pending.length > 0) throw new StoreUnavailableError(`The audit of event ${pending[0]} kept changing under concurrent writers; try again`)
  }

  /**
   * Looks at one event's kept facts again at `now`: where the look changed it is written, with its
   * verdict change when there is one. Resolves to that change; null when there was nothing to write
   * or another writer wrote the same look first (only one writer of a look records its change).
   */
  async relook(eventNo: number, now: number): Promise<VerdictChange | null> {
    const settings = this.settings(now)
    for (let attempt = 0; attempt < AUDIT_WRITE_ATTEMPTS; attempt++) {
      const kept = (await this.kept([eventNo])).get(eventNo)
      if (kept === undefined || kept.facts === undefined || kept.facts === null) return null
      const relook = relooked(kept, kept.looked_at, settings)
      if (relook === null) return null
      const change = asStored(relook.change)
      const rev = (kept.rev ?? 0) + 1
      const set: Document = { ...lookFields(relook.look, now), rev, ...(change === null ? {} : { change: { rev, value: change } }) }
      const result = await this.audits.updateOne(sameRevision(eventNo, kept.rev), { $set: set })
      if (result.matchedCount === 1) return change
    }
    throw new StoreUnavailableError(`The audit of event ${eventNo} kept changing under concurrent writers; try again`)
  }

  /** The write that brings one document up to date with the records; null when it is. */
  private recomputed(eventNo: number, kept: KeptDocument | undefined, records: StoredRecords, settings: AuditSettings): AuditWrite | null {
    // Nothing stored and nothing kept: no document for an event that does not exist (find answers null).
    if (kept === undefined && !records.any) return null
    const facts = this.factsOf(eventNo, records)
    if (kept !== undefined && agrees(kept, facts, settings)) return null
    const made = remade(facts, kept === undefined ? OUTSIDE : beforeOf(kept), settings)
    const rev = (kept?.rev ?? 0) + 1
    const set: Document = { event_no: eventNo, ...factFields(made.facts, made.report), ...lookFields(made.look, settings.now), rev }
    if (made.change !== null) set.change = { rev, value: asStored(made.change) }
    return { eventNo, filter: sameRevision(eventNo, kept?.rev), update: { $set: set }, upsert: kept === undefined }
  }

  /**
   * The writes, each conditional on the revision it read; resolves to the events whose write lost
   * (all of a bulk write that lost any: the next round skips those that are up to date).
   */
  private async write(writes: readonly AuditWrite[]): Promise<number[]> {
    if (writes.length === 0) return []
    const all = writes.map((write) => write.eventNo)
    try {
      if (writes.length === 1) {
        const { filter, update, upsert } = writes[0]!
        const result = await this.audits.updateOne(filter, update, { upsert })
        return result.matchedCount + result.upsertedCount === 1 ? [] : all
      }
      const operations = writes.map(({ filter, update, upsert }) => ({ updateOne: { filter, update, upsert } }))
      const result = await this.audits.bulkWrite(operations, { ordered: false })
      return result.matchedCount + result.upsertedCount === writes.length ? [] : all
    } catch (error) {
      // An insert that met the document another writer created meanwhile: that writer won the round.
      if (isDuplicateKey(error)) return all
      throw error
    }
  }
}
