import type Database from 'better-sqlite3'
import { asksBaseband } from '../../domain/events.js'
import { callbackHead, eventJson, outputSignature, traceJson } from '../../domain/output-forms.js'
import type { TraceRecord } from '../../domain/records.js'
import type { Sites } from '../../vocabulary.js'
import { isUnreadableContent } from '../../kept-audit/kept-check.js'
import { EVENT_COLUMNS, toEvent, type EventRow } from './event-rows.js'

/**
 * Rows rewritten per transaction: bounds the memory of a rewrite of a large store, what a start
 * killed half way loses, and how long a write waits behind one batch.
 */
export const TEXTS_BATCH = 5000

/** The settings row that says how far a rewrite under way went, for the signature it makes. */
const PLAN = 'output_texts_plan'

/** Event numbers are at most 2^53-1 (the contract): every event is at or below this. */
const EVERY_EVENT = Number.MAX_SAFE_INTEGER

interface TextsPlan {
  signature: string
  table: 'events' | 'traces'
  /** The last event number rewritten in `table`. */
  after: number
}

/**
 * How far a rewrite under way has made the stored texts for the configured sites: the rows of each
 * table up to these event numbers hold texts (and a baseband flag) made for them; the rows after
 * hold texts made for other sites or by another release, which no read may send (-1: none made yet).
 */
export interface TextsMadeUpTo {
  events: number
  traces: number
}

/** What reads ask before they use a stored text or the baseband flag: null while every one is made for the configured sites. */
export interface OutputTextsState {
  underWay(): TextsMadeUpTo | null
}

/** The texts of a store whose every text is made for its sites (a store nothing rewrites: a test's, MongoDB has none). */
export const TEXTS_MADE: OutputTextsState = { underWay: () => null }

/** What one batch came to: more to do (and how far it is), or the texts made (`again`: they had been made before, for other sites or by another release). */
export type TextsStep = { made: false; upTo: TextsMadeUpTo } | { made: true; again: boolean }

/**
 * The name of the SQL function over an event's stored `actions` that says whether it asks for
 * baseband data at a configured site (1 or 0), as a write makes the flag: reads of rows a rewrite
 * has not reached use it in place of the flag. NULL for actions that are not JSON, whose flag no
 * rewrite changes either: the stored one stands.
 */
export const ASKS_BASEBAND = 'tracer_asks_baseband'

/** Registers ASKS_BASEBAND on `db` for `sites`. Deterministic: SQLite may use it in any clause. */
export function registerAsksBaseband(db: Database.Database, sites: Sites): void {
  db.function(ASKS_BASEBAND, { deterministic: true }, (actions: unknown) => {
    if (typeof actions !== 'string') return null
    try {
      return asksBaseband(JSON.parse(actions), sites) ? 1 : 0
    } catch (error) {
      if (error instanceof SyntaxError) return null
      throw error
    }
  })
}

/**
 * The baseband flag of an event row as reads use it while a rewrite is under way: the stored one
 * where the rewrite has passed (`@eventsMade`), made from the actions elsewhere. `e` is the
 * events table's name in the statement.
 */
export const basebandWhileRewriting = (e: string) =>
  `(CASE WHEN ${e}event_no <= @eventsMade THEN ${e}baseband_requested ELSE coalesce(${ASKS_BASEBAND}(${e}actions), ${e}baseband_requested) END)`

function planOf(text: string | undefined, signature: string): TextsPlan | undefined {
  if (text === undefined) return undefined
  try {
    const plan = JSON.parse(text) as Partial<TextsPlan>
    const known = plan.signature === signature && (plan.table === 'events' || plan.table === 'traces') && typeof plan.after === 'number'
    return known ? (plan as TextsPlan) : undefined
  } catch {
    return undefined
  }
}

const madeUpTo = (plan: TextsPlan | undefined): TextsMadeUpTo =>
  plan === undefined ? { events: -1, traces: -1 } : plan.table === 'events' ? { events: plan.after, traces: -1 } : { events: EVERY_EVENT, traces: plan.after }

/**
 * Makes every stored output text again (and whether each event asks for baseband data, which also
 * depends on the sites) when the texts were made for other sites than the configured ones, or by a
 * release that makes them otherwise or made none (outputSignature). Nothing to do is one read. A
 * rewrite goes in order of event number, the events then the traces, `batch` rows an IMMEDIATE
 * transaction that also records how far it went: a start killed half way leaves the batches before
 * it done, and the next start under the same signature goes on after them; of two processes at
 * once, each batch takes the stretch after the last one committed. The signature is stored with
 * the last batch. Until then, reads ask `underWay` how far it went (OutputTextsState).
 */
export class OutputTextsRewrite {
  private readonly signature: string
  private readonly statements
  /** One batch; its IMMEDIATE transaction takes the write lock before it reads the plan. */
  private readonly batchOnce: () => TextsStep

  constructor(
    db: Database.Database,
    private readonly sites: Sites,
    private readonly batch = TEXTS_BATCH
  ) {
    this.signature = outputSignature(sites)
    this.statements = {
      setting: db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck(),
      events: db.prepare<[number, number], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE event_no > ? ORDER BY event_no LIMIT ?`),
      setEvent: db.prepare<[string, string, number, number]>('UPDATE events SET output = ?, callback_head = ?, baseband_requested = ? WHERE event_no = ?'),
      // A record that cannot be read keeps no text (reads make it from the record, as for a row an older release wrote).
      clearEvent: db.prepare<[number]>('UPDATE events SET output = NULL, callback_head = NULL WHERE event_no = ?'),
      traces: db.prepare<[number, number], { event_no: number; doc: string }>('SELECT event_no, doc FROM traces WHERE event_no > ? ORDER BY event_no LIMIT ?'),
      setTrace: db.prepare<[string | null, number]>('UPDATE traces SET output = ? WHERE event_no = ?'),
      mark: db.prepare<[string, string]>(`INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`),
      forget: db.prepare<[string]>('DELETE FROM settings WHERE name = ?')
    }
    const oneBatch = db.transaction(() => this.rewriteBatch())
    this.batchOnce = () => oneBatch.immediate()
  }

  /** Null when the texts are made for these sites by this release; how far a rewrite went otherwise. Reads only. */
  underWay(): TextsMadeUpTo | null {
    const { setting } = this.statements
    return setting.get('output_texts') === this.signature ? null : madeUpTo(planOf(setting.get(PLAN), this.signature))
  }

  /** Whether a start before this one left a rewrite under this signature half way. */
  left(): boolean {
    return planOf(this.statements.setting.get(PLAN), this.signature) !== undefined
  }

  /** One batch, in its own IMMEDIATE transaction: throws SQLITE_BUSY at once while another process holds the write lock. */
  step(): TextsStep {
    return this.batchOnce()
  }

  private rewriteBatch(): TextsStep {
    const { setting, mark, forget } = this.statements
    const before = setting.get('output_texts')
    if (before === this.signature) return { made: true, again: false }
    const plan = planOf(setting.get(PLAN), this.signature) ?? { signature: this.signature, table: 'events', after: -1 }
    const next = this.rewrite(plan)
    if (next === undefined) {
      mark.run('output_texts', this.signature)
      forget.run(PLAN)
      return { made: true, again: before !== undefined }
    }
    mark.run(PLAN, JSON.stringify(next))
    return { made: false, upTo: madeUpTo(next) }
  }

  /**
   * Rewrites up to `batch` rows after the plan's: the events, then, with the room the events left,
   * the traces (a small store is made in one batch). The plan after them, or undefined once none is left.
   */
  private rewrite(plan: TextsPlan): TextsPlan | undefined {
    const { events, setEvent, clearEvent, traces, setTrace } = this.statements
    const { sites, signature } = this
    let room = this.batch
    let after = plan.after
    if (plan.table === 'events') {
      const rows = events.all(after, room)
      for (const row of rows) {
        const made = readable(() => {
          const event = toEvent(row)
          // The flag as every write and the verifier make it (kept-texts.ts), from the actions as read.
          return [eventJson(event, sites), callbackHead(event), asksBaseband(event.actions, sites) ? 1 : 0] as const
        })
        if (made === null) clearEvent.run(row.event_no)
        else setEvent.run(...made, row.event_no)
      }
      if (rows.length === room) return { signature, table: 'events', after: rows.at(-1)!.event_no }
      room -= rows.length
      after = -1
    }
    const rows = traces.all(after, room)
    for (const row of rows) setTrace.run(readable(() => traceJson(row.event_no, JSON.parse(row.doc) as TraceRecord, sites)), row.event_no)
    return rows.length === room ? { signature, table: 'traces', after: rows.at(-1)!.event_no } : undefined
  }
}

/**
 * What `make` makes of one row's record, or null when the record cannot be read (not JSON, another
 * shape): one row's trouble, which the audit's check reports, never a rewrite stopped for good.
 */
function readable<T>(make: () => T): T | null {
  try {
    return make()
  } catch (error) {
    if (!isUnreadableContent(error)) throw error
    return null
  }
}

/**
 * Every batch of a rewrite that is due, at once (a test's, or a command's that makes everything
 * before it reads). Resolves to whether it made again texts made before (not a store's first texts).
 */
export function rebuildOutputTexts(db: Database.Database, sites: Sites, batch = TEXTS_BATCH): boolean {
  const rewrite = new OutputTextsRewrite(db, sites, batch)
  if (rewrite.underWay() === null) return false
  for (;;) {
    const step = rewrite.step()
    if (step.made) return step.again
  }
}
