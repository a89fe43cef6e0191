import type Database from 'better-sqlite3'
import { wantsBaseband } from '../../domain/events.js'
import { callbackHead, eventJson, outputSignature, traceJson } from '../../domain/output-forms.js'
import type { TraceRecord } from '../../domain/records.js'
import type { Sites } from '../../vocabulary.js'
import { EVENT_COLUMNS, toEvent, type EventRow } from './event-rows.js'

/**
 * Rows rewritten per transaction: bounds the memory of a rewrite of a large store, and what a
 * start killed half way loses.
 */
export const TEXTS_BATCH = 5000

/** The settings row that says how far a rewrite under way went, for the signature it makes. */
const PLAN = 'output_texts_plan'

interface TextsPlan {
  signature: string
  table: 'events' | 'traces'
  /** The last event number rewritten in `table`. */
  after: number
}

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

/**
 * Makes every stored output text again (and whether each event asks for baseband data, which also
 * depends on the sites) when the texts were made for other sites than the configured ones, or by a
 * release that makes them otherwise or made none (outputSignature). Resolves to whether it made
 * again texts made before (not a store's first texts). Nothing to do is one read. A rewrite goes
 * in order of event number, `batch` rows an IMMEDIATE transaction that also records how far it
 * went: a start killed half way leaves the batches before it done, and the next start under the
 * same signature goes on after them; of two processes starting at once, each batch takes the
 * stretch after the last one committed. The signature is stored with the last batch.
 */
export function rebuildOutputTexts(db: Database.Database, sites: Sites, batch = TEXTS_BATCH): boolean {
  const signature = outputSignature(sites)
  const read = db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck()
  if (read.get('output_texts') === signature) return false
  const events = db.prepare<[number, number], EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE event_no > ? ORDER BY event_no LIMIT ?`
  )
  const setEvent = db.prepare<[string, string, number, number]>(
    'UPDATE events SET output = ?, callback_head = ?, baseband_requested = ? WHERE event_no = ?'
  )
  const traces = db.prepare<[number, number], { event_no: number; doc: string }>(
    'SELECT event_no, doc FROM traces WHERE event_no > ? ORDER BY event_no LIMIT ?'
  )
  const setTrace = db.prepare<[string, number]>('UPDATE traces SET output = ? WHERE event_no = ?')
  const mark = db.prepare<[string, string]>(
    `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`
  )
  const forget = db.prepare<[string]>('DELETE FROM settings WHERE name = ?')

  /** Rewrites the rows of `plan.table` after `plan.after`: the last event number rewritten, or undefined when none was left. */
  const rewrite = (plan: TextsPlan): number | undefined => {
    if (plan.table === 'events') {
      const rows = events.all(plan.after, batch)
      for (const row of rows) {
        const event = toEvent(row)
        setEvent.run(eventJson(event, sites), callbackHead(event), wantsBaseband(event.actions, sites) ? 1 : 0, row.event_no)
      }
      return rows.length < batch ? undefined : rows.at(-1)!.event_no
    }
    const rows = traces.all(plan.after, batch)
    for (const row of rows) setTrace.run(traceJson(row.event_no, JSON.parse(row.doc) as TraceRecord, sites), row.event_no)
    return rows.length < batch ? undefined : rows.at(-1)!.event_no
  }

  const step = db.transaction((): boolean | 'more' => {
    const before = read.get('output_texts')
    if (before === signature) return false
    const plan = planOf(read.get(PLAN), signature) ?? { signature, table: 'events', after: -1 }
    const last = rewrite(plan)
    if (last === undefined && plan.table === 'traces') {
      mark.run('output_texts', signature)
      forget.run(PLAN)
      return before !== undefined
    }
    const next: TextsPlan = last === undefined ? { signature, table: 'traces', after: -1 } : { ...plan, after: last }
    mark.run(PLAN, JSON.stringify(next))
    return 'more'
  })
  for (;;) {
    const done = step.immediate()
    if (done !== 'more') return done
  }
}
