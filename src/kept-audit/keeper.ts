import type { VerdictChange } from '../../schemas/audit.js'
import type { AuditSettings } from '../domain/audit/audit-event.js'
import { factsOf, type EventRecords, type KeptFacts } from '../domain/audit/kept-facts.js'
import type { KeptLook } from '../domain/audit/kept-look.js'
import { entryPosition, reportOf, type WindowEntry } from '../domain/audit/kept-report.js'
import type { EventPosition } from '../domain/records.js'
import type { StageDeadlines } from '../domain/stage-deadlines.js'
import type { TimeWindow } from '../domain/time-window.js'
import { StoreUnavailableError } from '../store-unavailable.js'
import type { Sites } from '../vocabulary.js'
import { beforeOf, OUTSIDE, relooked, keptWriteOf } from './keeping.js'
import { isUnreadableContent, keptDifferences, LOOK_CLOCK_TOLERANCE_MS, reportedParts, type KeptPart } from './kept-check.js'
import { isUnreadableWindowRow, type KeptColumnRepair, type KeptStorage, type RowWrite, type ServedRow, type UnreadableRow } from './storage.js'

export interface KeptAudit {
  facts: KeptFacts
  look: KeptLook
}

/** An event whose kept audit differed from what its records make, found by `check` or `verify` and repaired. */
export interface AuditMismatch {
  event_no: number
  parts: KeptPart[]
  /** The facts kept before the repair; null where there was no row, or it could not be read. */
  kept: KeptFacts | null
  recomputed: KeptFacts
}

export interface AuditCheck {
  mismatches: AuditMismatch[]
  /** Nothing could be held against these (a record another program wrote is not what it must be): none is repaired. */
  unreadable: { event_no: number; error: string }[]
  /** The kept columns of the record tables that differed and were repaired (a store that keeps none: always empty). */
  columns: KeptColumnRepair[]
}

/** The kept audit as the store's users see it: everything but the keeping its writes call. */
export type AuditCollection = Pick<Keeper, 'find' | 'windowPage' | 'due' | 'settle' | 'check' | 'verify' | 'size' | 'marked' | 'unmark'>

export interface KeeperConfig {
  sites: Sites
  deadlines: StageDeadlines
  clock: () => number
}

/** Rounds of one write before 503: a round is lost only to a writer of the same row who read records at least as new. */
export const KEEP_ATTEMPTS = 10
const EVENTS_PER_ROUND = 500

/** One event held against its records: the parts of its row that differ, or why its records could not be read. */
type Compared = { event_no: number; parts: KeptPart[]; row: ServedRow | UnreadableRow | undefined; recomputed: KeptFacts } | { event_no: number; error: string }

const readable = (row: ServedRow | UnreadableRow | undefined): ServedRow | undefined => (row === undefined || 'error' in row ? undefined : row)
const message = (error: unknown) => (error instanceof Error ? error.message : String(error))
const hasRecords = ({ event, trace, datatrail, heartbeats }: EventRecords) => event !== null || trace !== null || datatrail.length > 0 || heartbeats.length > 0
/**
 * Facts in the form a row reads back in (JSON's), so that a row read back compares equal to what was written: the row's own
 * where its text is the same (most rows, and no second parse or deep comparison), else the text parsed.
 */
function asStored(facts: KeptFacts, row: ServedRow | UnreadableRow | undefined): KeptFacts {
  const text = JSON.stringify(facts)
  const kept = readable(row)
  return kept?.factsText === text ? kept.facts : (JSON.parse(text) as KeptFacts)
}

/** One algorithm for both adapters (README.md), each write conditional on the row read; SQLite's own writes keep it in their transaction. */
export class Keeper {
  constructor(
    private readonly storage: KeptStorage,
    readonly config: KeeperConfig
  ) {}

  settings(now = this.config.clock()): AuditSettings {
    return { sites: this.config.sites, deadlines: this.config.deadlines, now }
  }

  /** One event's kept audit; null for an event that is not in the audit (not stored, or asking for no baseband data). */
  async find(eventNo: number): Promise<KeptAudit | null> {
    const row = (await this.storage.rows([eventNo])).get(eventNo)
    if (row === undefined) return null
    if ('error' in row) throw new TypeError(row.error)
    return row.facts?.event?.listed === true ? { facts: row.facts, look: row.look } : null
  }

  /** The window's kept entries after `after`, at most `limit`; one that cannot be read is made from its records, for the verifier to repair. */
  async windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowEntry[]> {
    const entries: WindowEntry[] = []
    let position = after
    for (;;) {
      const wanted = limit - entries.length
      const rows = await this.storage.windowRows(window, position, wanted)
      const unreadable = rows.filter(isUnreadableWindowRow)
      const records = unreadable.length === 0 ? undefined : await this.storage.records(unreadable.map((row) => row.event_no))
      for (const row of rows) {
        if (!isUnreadableWindowRow(row)) {
          entries.push(row)
          continue
        }
        const read = records!.get(row.event_no)!
        if ('error' in read) throw new TypeError(read.error)
        // Null where the records say the event is no longer in the audit: the row should not be there.
        const made = reportOf(factsOf(row.event_no, read, this.config.sites), this.config.sites)
        if (made !== null) entries.push(made)
      }
      // A row left out is made up for by the next: a short page would end the window's read.
      if (entries.length === limit || rows.length < wanted || rows.length === 0) return entries
      const last = rows.at(-1)!
      position = isUnreadableWindowRow(last) ? { timestamp: last.event_time, event_no: last.event_no } : entryPosition(last)
    }
  }

  /** Events to look at again at `now` (ms): those looked at under a later clock (it moved back), then those due, earliest first. */
  async due(now: number, limit: number): Promise<number[]> {
    const ahead = await this.storage.lookedAfter(now + LOOK_CLOCK_TOLERANCE_MS, limit)
    if (ahead.length === limit) return ahead
    const due = (await this.storage.dueBy(now, limit)).filter((eventNo) => !ahead.includes(eventNo))
    return [...ahead, ...due].slice(0, limit)
  }

  /** Looks again at `now` (ms), writing the looks that changed, and resolves to their verdict changes; an unreadable row goes to `unreadable`. */
  async settle(eventNos: readonly number[], now: number, unreadable?: (eventNo: number) => void): Promise<VerdictChange[]> {
    const settings = this.settings(now)
    const changes: VerdictChange[] = []
    let pending = [...eventNos]
    // A first round even with nothing to settle: a store that keeps the changes apart forgets old ones at each write.
    for (let attempt = 0; attempt === 0 || (attempt < KEEP_ATTEMPTS && pending.length > 0); attempt++) {
      const rows = await this.storage.rows(pending)
      const writes: (RowWrite & { change: VerdictChange | null })[] = []
      for (const eventNo of pending) {
        const row = rows.get(eventNo)
        if (row === undefined) continue
        try {
          if ('error' in row) throw new TypeError(row.error)
          const relook = relooked(row, row.looked_at, settings)
          if (relook !== null) writes.push({ event_no: eventNo, held: row, ...relook })
        } catch (error) {
          if (!isUnreadableContent(error)) throw error
          if (attempt === 0) unreadable?.(eventNo)
        }
      }
      const lost = new Set(await this.storage.write(writes, now))
      for (const { event_no, change } of writes) if (!lost.has(event_no) && change !== null) changes.push(change)
      pending = [...lost]
    }
    if (pending.length > 0) throw contended(pending[0]!)
    return changes
  }

  /** Holds kept audits and columns to their records at `now`, repairing; `repair: false` writes nothing and leaves the look out (LOOK_PARTS). */
  async check(eventNos: readonly number[], now: number, { repair = true }: { repair?: boolean } = {}): Promise<AuditCheck> {
    const columns = await this.storage.columnsOf(eventNos, repair)
    return { ...(await this.checkRows(eventNos, now, repair)), columns }
  }

  /**
   * `check` of the next `limit` events after `after` and of the kept columns of their stretch, the output texts and baseband
   * flag unless `texts` is false (the upkeep's passes between two of theirs); `last` is null at the end.
   */
  async verify(after: number, limit: number, now: number, { texts = true }: { texts?: boolean } = {}): Promise<AuditCheck & { checked: number; last: number | null }> {
    const audited = await this.storage.auditedAfter(after, limit)
    const last = audited.length < limit ? null : audited.at(-1)!
    // The columns first: an event whose flag said, wrongly, that it asked for no baseband data is then checked with the others.
    const columns = await this.storage.columnsIn(after, last ?? Number.MAX_SAFE_INTEGER, texts)
    const flagged = columns.filter(({ column }) => column === 'events.baseband_requested').map(({ event_no }) => event_no)
    const eventNos = [...new Set([...audited, ...flagged])].sort((a, b) => a - b)
    return { ...(await this.checkRows(eventNos, now, true)), columns, checked: eventNos.length, last }
  }

  async size(): Promise<number> {
    return this.storage.size()
  }

  /** Events another program wrote (SQLite's triggers mark them; MongoDB marks none), oldest first, and the `upTo` for `unmark`. */
  async marked(limit: number): Promise<{ eventNos: number[]; upTo: number }> {
    return this.storage.marked(limit)
  }

  async unmark(upTo: number): Promise<void> {
    await this.storage.unmark(upTo)
  }

  /**
   * Brings each event's kept audit up to date with its records once a write landed (MongoDB). Facts made from the records
   * make instances converge: the write that lands last was made from records read after every write acknowledged before it.
   */
  async keep(eventNos: Iterable<number>, now?: number): Promise<void> {
    const all = [...new Set(eventNos)]
    for (let start = 0; start < all.length; start += EVENTS_PER_ROUND) await this.repair(all.slice(start, start + EVENTS_PER_ROUND), this.settings(now))
  }

  private async checkRows(eventNos: readonly number[], now: number, repair: boolean): Promise<Omit<AuditCheck, 'columns'>> {
    const settings = this.settings(now)
    const found = this.compared(eventNos, await this.storage.read(eventNos), settings)
    const result: Omit<AuditCheck, 'columns'> = { mismatches: [], unreadable: found.filter((compared) => 'error' in compared) }
    if (!repair) {
      for (const compared of found) {
        if ('error' in compared) continue
        const parts = reportedParts(compared.parts)
        if (parts.length > 0) result.mismatches.push(mismatchOf({ ...compared, parts }))
      }
      return result
    }
    for (const { event_no } of result.unreadable) await this.storage.setAside(event_no)
    const differing = found.filter((compared) => 'parts' in compared && compared.parts.length > 0).map(({ event_no }) => event_no)
    // Read again before the write: a write that landed since the first read is neither undone nor counted.
    if (differing.length > 0) await this.repair(differing, settings, (mismatch) => result.mismatches.push(mismatch))
    return result
  }

  /** Writes each differing row again from its records, reading again those that changed meanwhile; `repaired` hears of each. */
  private async repair(eventNos: readonly number[], settings: AuditSettings, repaired?: (mismatch: AuditMismatch) => void): Promise<void> {
    let pending = eventNos
    for (let attempt = 0; attempt < KEEP_ATTEMPTS && pending.length > 0; attempt++) {
      const found = this.compared(pending, await this.storage.read(pending), settings)
      const writes: { write: RowWrite; compared: Extract<Compared, { parts: KeptPart[] }> }[] = []
      for (const compared of found) {
        if ('error' in compared || compared.parts.length === 0) continue
        const { row, recomputed } = compared
        const kept = readable(row)
        const made = keptWriteOf(recomputed, kept === undefined ? OUTSIDE : beforeOf(kept), settings)
        writes.push({ write: { event_no: compared.event_no, held: row ?? { existed: false, rev: undefined }, made }, compared })
      }
      const lost = new Set(await this.storage.write(writes.map(({ write }) => write), settings.now))
      for (const { compared } of writes) if (!lost.has(compared.event_no)) repaired?.(mismatchOf(compared))
      pending = [...lost]
    }
    if (pending.length > 0) throw contended(pending[0]!)
  }

  private compared(eventNos: readonly number[], { rows, records }: Awaited<ReturnType<KeptStorage['read']>>, settings: AuditSettings): Compared[] {
    return eventNos.map((eventNo): Compared => {
      const read = records.get(eventNo)!
      const row = rows.get(eventNo)
      let recomputed: KeptFacts
      try {
        if ('error' in read) throw new TypeError(read.error)
        recomputed = asStored(factsOf(eventNo, read, this.config.sites), row)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        return { event_no: eventNo, error: message(error) }
      }
      let parts: KeptPart[]
      try {
        if (row !== undefined && 'error' in row) throw new TypeError(row.error)
        parts = keptDifferences(row ?? null, recomputed, settings)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        parts = ['row']
      }
      // A store that keeps a row of every event with a record misses one where there is none.
      if (row === undefined && parts.length === 0 && this.storage.keepsEveryEvent && hasRecords(read)) parts = ['row']
      return { event_no: eventNo, parts, row, recomputed }
    })
  }
}

const mismatchOf = ({ event_no, parts, row, recomputed }: Extract<Compared, { parts: KeptPart[] }>): AuditMismatch => ({
  event_no,
  parts,
  kept: readable(row)?.facts ?? null,
  recomputed
})

const contended = (eventNo: number) => new StoreUnavailableError(`The audit of event ${eventNo} kept changing under concurrent writers; try again`)
