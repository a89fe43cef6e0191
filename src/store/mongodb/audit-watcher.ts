import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, Document } from 'mongodb'
import type { Keeper } from '../../kept-audit/keeper.js'
import { ChangeReader } from './change-reader.js'
import { numberIn } from './documents.js'
import { COLLECTIONS } from './indexes.js'
import { changesHistoryAlone, isSummaryPath } from './history-summary.js'
import { recordReads, type HistorySummaryWrites, type RecordReads } from './record-writes.js'
import { HISTORY_FIELD } from './transitions.js'

/** The collections whose writes change an event's facts. */
const WATCHED = [COLLECTIONS.events, COLLECTIONS.trace, COLLECTIONS.datatrail, COLLECTIONS.heartbeats] as const

/**
 * Of each change, what tells its event: inserts and replacements carry the whole document, updates
 * what they set (a transition this service pushes names its event). Deletes are left out: they show
 * only the `_id` of a document that is gone, so the event cannot be told; `verify` repairs them.
 */
const WATCH_PIPELINE: Document[] = [
  { $match: { operationType: { $in: ['insert', 'replace', 'update', 'invalidate'] } } },
  {
    $project: {
      operationType: 1,
      documentKey: 1,
      'fullDocument.event_no': 1,
      'updateDescription.updatedFields': 1,
      'updateDescription.removedFields': 1,
      'updateDescription.truncatedArrays': 1
    }
  }
]

/** How long the server holds an empty read of one stream: four of them make one idle pass. */
const WATCH_WAIT_MS = 25
/** The pause after a pass that found nothing: how late another program's write is seen, at most, beyond the pass. */
export const WATCH_IDLE_MS = 100
/** After a failure the next pass waits this long, doubling up to WATCH_RETRY_MAX_MS while failures go on. */
const WATCH_RETRY_MS = 1_000
const WATCH_RETRY_MAX_MS = 30_000
/** Changes taken from one stream in one pass, and events recomputed in one round. */
const CHANGES_PER_PASS = 1_000
const EVENTS_PER_KEEP = 200

const TRANSITION_PATH = new RegExp(`^${HISTORY_FIELD}\\.\\d+$`)

/** What a change says of its event: its number, none to recompute, or that the document must be read to tell. */
type Told = { eventNo: number } | 'nothing' | 'look-up'

const numberOrNothing = (value: unknown): Exclude<Told, 'look-up'> => {
  const eventNo = numberIn(value, Number.NaN)
  return Number.isNaN(eventNo) ? 'nothing' : { eventNo }
}

export function eventOfChange(change: Document): Told {
  if (change.operationType === 'insert' || change.operationType === 'replace') {
    return numberOrNothing((change.fullDocument as Document | undefined)?.event_no)
  }
  if (change.operationType !== 'update') return 'nothing'
  const description = (change.updateDescription ?? {}) as Document
  const updated = (description.updatedFields ?? {}) as Document
  const removed = Array.isArray(description.removedFields) ? description.removedFields : []
  const paths = Object.keys(updated)
  // A rewrite of a value that did not change (update-trace with the stored value) moves only this. The
  // summary of a history is made from the history (history-summary.ts): a write of it alone changes no facts.
  if (removed.every(isSummaryPath) && paths.every((path) => path === 'update_timestamp' || isSummaryPath(path))) return 'nothing'
  if (Object.hasOwn(updated, 'event_no')) return numberOrNothing(updated.event_no)
  for (const path of paths) {
    if (!TRANSITION_PATH.test(path)) continue
    const told = numberOrNothing((updated[path] as Document | null)?.event_no)
    if (told !== 'nothing') return told
  }
  // Another program's $set names the document by `_id` only.
  return 'look-up'
}

/** A document to read for its event_no. */
interface LookUp {
  collection: RecordReads
  id: unknown
}

/**
 * Keeps the audit of the events other programs write straight into the collections (the pipeline's
 * update-trace, a restore): it follows the change streams of events, trace, datatrail and heartbeats
 * and has the keeper recompute every event it sees changed. This service's own writes come back
 * through it too; recomputing them again finds nothing to write. It never stops the process: a
 * failure (the database away, a server without change streams) is logged once, when it begins, and
 * the passes go on with a growing pause until one succeeds, which is logged too. Events seen but not
 * yet recomputed are kept for the next pass, and each stream goes on from its resume token. What no
 * stream shows is left to `verify` (the audit keeper's verifier): deletes, and the writes of a gap
 * when a stream could not resume (its history gone from the oplog) and started again from now.
 *
 * An update of a trace's history that leaves its summary as it was is another program's: the
 * summary is marked out of step before the event is recomputed, so that its facts are made from
 * the whole history (history-summary.ts). Only this tells a `$pull`, or an edit inside a history,
 * that leaves its last element as it was: one made in a gap of the stream is not seen.
 */
export class AuditWatcher {
  private readonly streams: { name: string; collection: RecordReads; reader: ChangeReader }[]
  private readonly pending = new Set<number>()
  private lookUps: LookUp[] = []
  /** The `_id`s of trace documents whose history another program changed, their summaries to mark out of step. */
  private forgets: unknown[] = []
  private readonly stopping = new AbortController()
  private running: Promise<void> | undefined
  private failing = false

  constructor(
    db: Db,
    private readonly keeper: Keeper,
    private readonly log: (message: string) => void,
    private readonly summaries: Pick<HistorySummaryWrites, 'forget'>
  ) {
    this.streams = WATCHED.map((name) => {
      const collection = recordReads(db, name)
      return { name, collection, reader: new ChangeReader(collection, WATCH_PIPELINE, WATCH_WAIT_MS, `Watching ${name}`) }
    })
  }

  /**
   * Opens the streams and reads them to their end: every write from now on will be seen. Called
   * before the start-up work, so a write another program makes during it is not missed. A failure
   * is logged; the passes will retry.
   */
  async begin(): Promise<void> {
    try {
      await this.pass()
    } catch (error) {
      this.failed(error)
    }
  }

  /** Goes on in the background until close(). */
  run(): void {
    this.running ??= this.loop()
  }

  /** Ends the passes (the one under way finishes first) and the streams. */
  async close(): Promise<void> {
    this.stopping.abort()
    await this.running
    await Promise.all(this.streams.map(({ reader }) => reader.close().catch(() => {})))
  }

  private async loop(): Promise<void> {
    const { signal } = this.stopping
    let retry = WATCH_RETRY_MS
    while (!signal.aborted) {
      let pause: number
      try {
        pause = (await this.pass()) ? 0 : WATCH_IDLE_MS
        if (this.failing) this.log('Kept audits: following the writes of other programs again')
        this.failing = false
        retry = WATCH_RETRY_MS
      } catch (error) {
        if (signal.aborted) return
        this.failed(error)
        pause = retry
        retry = Math.min(retry * 2, WATCH_RETRY_MAX_MS)
      }
      // Unref'd: a pause never keeps a process alive that has nothing else to do.
      await sleep(pause, undefined, { signal, ref: false }).catch(() => {})
    }
  }

  private failed(error: unknown): void {
    if (this.failing) return
    this.failing = true
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    this.log(`Kept audits: following the writes of other programs failed (${reason}); retrying until it works`)
  }

  /** Reads every stream, then recomputes the events seen. Resolves to whether any change was read. */
  private async pass(): Promise<boolean> {
    let read = 0
    for (const { name, collection, reader } of this.streams) {
      if (this.stopping.signal.aborted) return false
      await reader.read(CHANGES_PER_PASS, (change) => {
        read++
        if (name === COLLECTIONS.trace && changesHistoryAlone(change)) this.forgets.push((change.documentKey as Document | undefined)?._id)
        const told = eventOfChange(change)
        if (told === 'look-up') this.lookUps.push({ collection, id: (change.documentKey as Document | undefined)?._id })
        else if (told !== 'nothing') this.pending.add(told.eventNo)
      })
    }
    await this.lookUp()
    // Before the recompute of their events, which then reads their whole histories.
    await this.summaries.forget(this.forgets.filter((id) => id !== undefined))
    this.forgets = []
    await this.recompute()
    return read > 0
  }

  /** The event of each document an update named by `_id` only; one deleted since is left to `verify`. */
  private async lookUp(): Promise<void> {
    while (this.lookUps.length > 0) {
      const { collection, id } = this.lookUps[0]!
      if (id !== undefined) {
        const document = await collection.findOne({ _id: id as never }, { projection: { _id: 0, event_no: 1 } })
        const told = numberOrNothing(document?.event_no)
        if (told !== 'nothing') this.pending.add(told.eventNo)
      }
      this.lookUps.shift()
    }
  }

  private async recompute(): Promise<void> {
    while (this.pending.size > 0 && !this.stopping.signal.aborted) {
      const round = [...this.pending].slice(0, EVENTS_PER_KEEP)
      await this.keeper.keep(round)
      for (const eventNo of round) this.pending.delete(eventNo)
    }
  }
}
