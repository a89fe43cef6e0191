import type Database from 'better-sqlite3'
import { asksBaseband } from '../../domain/events.js'
import { outputSignature, traceJson } from '../../domain/output-forms.js'
import type { TraceRecord } from '../../domain/records.js'
import type { Sites } from '../../vocabulary.js'
import { EVENT_COLUMNS, keptColumnsOf, readable, toEvent, type EventRow } from './event-rows.js'

/** Rows rewritten per transaction: bounds a rewrite's memory, what a start killed half way loses, and a write's wait. */
export const TEXTS_BATCH = 5000

/** The settings row that says how far a rewrite under way went, for the signature it makes. */
const PLAN = 'output_texts_plan'

interface TextsPlan {
  signature: string
  table: 'events' | 'traces'
  /** The last event number rewritten in `table`. */
  after: number
}

/** How far a rewrite went: each table's rows up to these event numbers hold texts (and flags) made for these sites (-1: none). */
export interface TextsMadeUpTo {
  events: number
  traces: number
}

/** What reads ask before they use a stored text or the baseband flag: null while every one is made for the configured sites. */
export interface OutputTextsState {
  underWay(): TextsMadeUpTo | null
}

/** What one batch came to: more to do (and how far it is), or the texts made (`again`: they had been made before, for other sites or by another release). */
export type TextsStep = { made: false; upTo: TextsMadeUpTo } | { made: true; again: boolean }

/** The SQL function making an event's baseband flag from its `actions` as a write does; NULL for actions that are not JSON (the stored flag stands). */
const ASKS_BASEBAND = 'tracer_asks_baseband'

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

/** An event row's baseband flag while a rewrite is under way: stored up to `@eventsMade`, made from the actions after. `e` names the table. */
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

// Event numbers are at most 2^53-1 (the contract): the traces' turn comes after every event.
const madeUpTo = (plan: TextsPlan | undefined): TextsMadeUpTo =>
  plan === undefined ? { events: -1, traces: -1 } : plan.table === 'events' ? { events: plan.after, traces: -1 } : { events: Number.MAX_SAFE_INTEGER, traces: plan.after }

/**
 * Makes every stored output text and baseband flag again when made for other sites or by another
 * release (outputSignature): by event number, the events then the traces, `batch` rows an IMMEDIATE
 * transaction that records how far it went, so a start killed half way is gone on from, and of two
 * processes each batch takes the stretch after the last commit.
 */
export class OutputTextsRewrite {
  private readonly signature: string
  private readonly statements
  /** One batch, in an IMMEDIATE transaction (the write lock taken before the plan is read): throws SQLITE_BUSY at once while another process holds it. */
  readonly step: () => TextsStep

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
    this.step = () => oneBatch.immediate()
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

  /** Up to `batch` rows after the plan's: the events, then, with the room they left, the traces. The plan after them; undefined once none is left. */
  private rewrite(plan: TextsPlan): TextsPlan | undefined {
    const { events, setEvent, clearEvent, traces, setTrace } = this.statements
    const { sites, signature } = this
    let room = this.batch
    let after = plan.after
    if (plan.table === 'events') {
      const rows = events.all(after, room)
      for (const row of rows) {
        const made = readable(() => keptColumnsOf(toEvent(row), sites))
        if (made === null) clearEvent.run(row.event_no)
        else setEvent.run(made.output, made.callback_head, made.baseband_requested, row.event_no)
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

/** Every batch of a rewrite that is due, at once (a test's, or a command's). Whether it made again texts made before. */
export function rebuildOutputTexts(db: Database.Database, sites: Sites, batch = TEXTS_BATCH): boolean {
  const rewrite = new OutputTextsRewrite(db, sites, batch)
  if (rewrite.underWay() === null) return false
  for (;;) {
    const step = rewrite.step()
    if (step.made) return step.again
  }
}
