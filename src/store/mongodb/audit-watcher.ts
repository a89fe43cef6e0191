import { setTimeout as sleep } from 'node:timers/promises'
import type { Db, Document } from 'mongodb'
import type { Keeper } from '../../kept-audit/keeper.js'
import { ChangeReader } from './change-reader.js'
import { numberIn } from './documents.js'
import { COLLECTIONS } from './indexes.js'
import { changesHistoryAlone, HISTORY_FIELD, isSummaryPath } from './history-summary.js'
import { RECORD_COLLECTIONS, recordReads, type HistorySummaryWrites, type RecordReads } from './record-writes.js'

/** What tells a change's event: the document of an insert or replacement, what an update set. A delete shows only a gone document's `_id`: left to `verify`. */
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
const WATCH_IDLE_MS = 100
/** The pause after a failure, doubling while failures go on. */
const WATCH_RETRY_MS = 1_000
const WATCH_RETRY_MAX_MS = 30_000
/** Changes taken from one stream in one pass, and events recomputed in one round. */
const CHANGES_PER_PASS = 1_000
const EVENTS_PER_KEEP = 200

const TRANSITION_PATH = new RegExp(`^${HISTORY_FIELD}\\.\\d+$`)

/** The event a change names (NaN: none to recompute), or `look-up` when its document must be read to tell. */
function eventOfChange(change: Document): number | 'look-up' {
  const inserted = change.operationType === 'insert' || change.operationType === 'replace'
  if (inserted) return numberIn((change.fullDocument as Document | undefined)?.event_no, Number.NaN)
  if (change.operationType !== 'update') return Number.NaN
  const description = (change.updateDescription ?? {}) as Document
  const updated = (description.updatedFields ?? {}) as Document
  const removed = Array.isArray(description.removedFields) ? description.removedFields : []
  const paths = Object.keys(updated)
  // An unchanged value rewritten moves only update_timestamp; a write of the summary alone changes no facts.
  if (removed.every(isSummaryPath) && paths.every((path) => path === 'update_timestamp' || isSummaryPath(path))) return Number.NaN
  if (Object.hasOwn(updated, 'event_no')) return numberIn(updated.event_no, Number.NaN)
  for (const path of paths) {
    const told = TRANSITION_PATH.test(path) ? numberIn((updated[path] as Document | null)?.event_no, Number.NaN) : Number.NaN
    if (!Number.isNaN(told)) return told
  }
  // Another program's $set names the document by `_id` only.
  return 'look-up'
}

/**
 * Keeps the audit of what other programs write straight into the collections (the pipeline, a restore): the keeper
 * recomputes every event their change streams show changed. It never stops the process: a failure is logged once and
 * the passes go on with a growing pause until one succeeds, logged too. Deletes, and a gap a stream could not resume
 * over, are left to `verify`. A history updated without its summary first has the summary marked out of step.
 */
export class AuditWatcher {
  private readonly streams: { name: string; collection: RecordReads; reader: ChangeReader }[]
  private readonly pending = new Set<number>()
  /** Documents an update named by `_id` only, to read for their event_no. */
  private lookUps: { collection: RecordReads; id: unknown }[] = []
  /** The `_id`s of traces whose history another program changed. */
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
    this.streams = RECORD_COLLECTIONS.map((name) => {
      const collection = recordReads(db, name)
      return { name, collection, reader: new ChangeReader(collection, WATCH_PIPELINE, WATCH_WAIT_MS, `Watching ${name}`) }
    })
  }

  /** Opens the streams and reads them to their end, so that every write from now on is seen; a failure is logged, and the passes retry. */
  async begin(): Promise<void> {
    await this.pass().catch((error: unknown) => this.failed(error))
  }

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

  /** Resolves to whether any change was read. */
  private async pass(): Promise<boolean> {
    let read = 0
    for (const { name, collection, reader } of this.streams) {
      if (this.stopping.signal.aborted) return false
      await reader.read(CHANGES_PER_PASS, (change) => {
        read++
        if (name === COLLECTIONS.trace && changesHistoryAlone(change)) this.forgets.push((change.documentKey as Document | undefined)?._id)
        const told = eventOfChange(change)
        if (told === 'look-up') this.lookUps.push({ collection, id: (change.documentKey as Document | undefined)?._id })
        else if (!Number.isNaN(told)) this.pending.add(told)
      })
    }
    await this.lookUp()
    await this.summaries.forget(this.forgets.filter((id) => id !== undefined))
    this.forgets = []
    await this.recompute()
    return read > 0
  }

  /** A document deleted since is left to `verify`. */
  private async lookUp(): Promise<void> {
    while (this.lookUps.length > 0) {
      const { collection, id } = this.lookUps[0]!
      if (id !== undefined) {
        const document = await collection.findOne({ _id: id as never }, { projection: { _id: 0, event_no: 1 } })
        const eventNo = numberIn(document?.event_no, Number.NaN)
        if (!Number.isNaN(eventNo)) this.pending.add(eventNo)
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
