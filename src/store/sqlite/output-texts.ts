import type Database from 'better-sqlite3'
import { wantsBaseband } from '../../domain/events.js'
import { callbackHead, eventJson, outputSignature, traceJson } from '../../domain/output-forms.js'
import type { TraceRecord } from '../../domain/records.js'
import type { Sites } from '../../vocabulary.js'
import { EVENT_COLUMNS, toEvent, type EventRow } from './event-rows.js'

/** Rows rewritten per statement: bounds the memory of a rewrite of a large store. */
const BATCH = 5000

/**
 * Makes every stored output text again (and whether each event asks for baseband data, which also
 * depends on the sites) when the texts were made for other sites than the configured ones, or by a
 * release that makes them otherwise or made none (outputSignature). Resolves to whether it made
 * again texts made before (not a store's first texts). Nothing to do is one read; a rewrite is one IMMEDIATE
 * transaction, so a second process starting at the same time waits and then finds it done.
 */
export function refreshOutputTexts(db: Database.Database, sites: Sites): boolean {
  const signature = outputSignature(sites)
  const made = db.prepare<[], string>(`SELECT value FROM settings WHERE name = 'output_texts'`).pluck()
  if (made.get() === signature) return false
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
  const mark = db.prepare<[string]>(
    `INSERT INTO settings (name, value) VALUES ('output_texts', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`
  )
  return db.transaction(() => {
    if (made.get() === signature) return false
    for (let rows = events.all(-Infinity, BATCH); rows.length > 0; rows = events.all(rows[rows.length - 1]!.event_no, BATCH)) {
      for (const row of rows) {
        const event = toEvent(row)
        setEvent.run(eventJson(event, sites), callbackHead(event), wantsBaseband(event.actions, sites) ? 1 : 0, row.event_no)
      }
    }
    for (let rows = traces.all(-Infinity, BATCH); rows.length > 0; rows = traces.all(rows[rows.length - 1]!.event_no, BATCH)) {
      for (const row of rows) setTrace.run(traceJson(row.event_no, JSON.parse(row.doc) as TraceRecord, sites), row.event_no)
    }
    const before = made.get()
    mark.run(signature)
    return before !== undefined
  }).immediate()
}
