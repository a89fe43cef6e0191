import type Database from 'better-sqlite3'
import type { FeedTransition, HistoryPosition, TraceRecord, TransitionRecord } from '../../domain/records.js'
import { newTraceJson, traceJson } from '../../domain/output-forms.js'
import { newTraceDocument, storedStatus } from '../../domain/trace.js'
import type { Sites, WrittenStatus } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { HistoryPage, TraceCollection } from '../port.js'
import { applyStatus, applyTrace, applyTransition } from '../../domain/audit/kept-facts.js'
import type { FactChange, RecordWrites } from './record-writes.js'
import { GroupCommit } from './group-commit.js'

/** A JSON path to one flat key; keys come from the configured sites and stages, never from input. */
const pathTo = (key: string) => `$.${JSON.stringify(key)}`

/** A new document: the sites' template with its event number and times filled in. */
const NEW_DOCUMENT = `json_set(@template, '$.event_no', CAST(@eventNo AS INTEGER), '$.create_timestamp', @now, '$.update_timestamp', @now)`

/**
 * The output text of a new trace (output-forms.ts), kept in step with the document by the same
 * statement, so a write costs no read: the keys are in place from the start, and `json_set`
 * replaces a value where it stands. The write time goes in as JavaScript's JSON text
 * (`json(@nowText)`): SQLite renders a REAL otherwise (`5.0`).
 */
const NEW_OUTPUT = `json_set(@outputTemplate, '$.event_no', CAST(@eventNo AS INTEGER), '$.update_timestamp', json(@nowText))`

export const TRANSITION_COLUMNS = `key, "from", "to", at, by`

type PositionedRow = TransitionRecord & { seq: number }

/** A value another writer stored that is not text, as text: a transition's `from` is a string. */
const asText = (value: unknown): string | null => (value === null || typeof value === 'string' ? value : JSON.stringify(value))

/** Traces: one JSON document per event, with the flat slash keys the pipeline writes, and their history. */
export class SqliteTraces implements Adapter<TraceCollection> {
  private readonly statements
  readonly create: (eventNo: number, now: number) => void
  /** Reads the old value, writes the new one and, when it changed, its transition; concurrent ones commit together. */
  readonly setStatus: (eventNo: number, key: string, status: WrittenStatus, now: number, by: string) => Promise<boolean>
  readonly record: (transitions: readonly FeedTransition[]) => number
  readonly upsert: (traces: readonly TraceRecord[]) => number

  constructor(
    private readonly db: Database.Database,
    sites: Sites,
    records: RecordWrites
  ) {
    // A new trace of the configured sites, with every key `incomplete`, and its output text.
    const template = JSON.stringify(newTraceDocument(sites, 0, 0))
    const outputTemplate = newTraceJson(sites)
    const outputKeys = new Set(sites.traceKeys)
    // A value that did not change moves nothing the audit reads.
    const statusChange = ({ eventNo, status }: { eventNo: number; status: string }, _result: unknown, { key, changed }: { key: string; changed: boolean }): FactChange =>
      changed ? [eventNo, (facts) => applyStatus(facts, key, status, undefined, sites)] : null
    this.statements = {
      create: records.statement<{ eventNo: number; template: string; outputTemplate: string; now: number; nowText: string }>(
        `INSERT INTO traces (event_no, doc, output) VALUES (@eventNo, ${NEW_DOCUMENT}, ${NEW_OUTPUT})
         ON CONFLICT (event_no) DO NOTHING`,
        // A new trace holds every key incomplete, as no trace does: nothing the audit reads changes.
        () => null
      ),
      current: db.prepare<{ eventNo: number; path: string }, { value: unknown }>(
        'SELECT json_extract(doc, @path) AS value FROM traces WHERE event_no = @eventNo'
      ),
      // A key of no configured site is not output; the output holds the status as read (`shown`:
      // stored `not_required` reads `complete`). Two statements, not an upsert, which would make
      // the new row's documents first: four JSON edits of a kilobyte wasted by nearly every write.
      createWithStatus: records.statement<
        { eventNo: number; template: string; outputTemplate: string; path: string; output: 0 | 1; status: string; shown: string; now: number; nowText: string },
        { key: string; changed: boolean }
      >(
        `INSERT INTO traces (event_no, doc, output)
         VALUES (@eventNo, json_set(${NEW_DOCUMENT}, @path, @status),
                 CASE WHEN @output THEN json_set(${NEW_OUTPUT}, @path, @shown) ELSE ${NEW_OUTPUT} END)`,
        statusChange
      ),
      setStatus: records.statement<
        { eventNo: number; path: string; output: 0 | 1; status: string; shown: string; now: number; nowText: string },
        { key: string; changed: boolean }
      >(
        `UPDATE traces SET
           doc = json_set(doc, @path, @status, '$.update_timestamp', @now),
           output = CASE WHEN @output THEN json_set(output, @path, @shown, '$.update_timestamp', json(@nowText))
                         ELSE json_set(output, '$.update_timestamp', json(@nowText)) END
         WHERE event_no = @eventNo`,
        statusChange
      ),
      record: records.statement<{ eventNo: number; key: string; from: string | null; to: string; at: number; by: string }>(
        'INSERT INTO transitions (event_no, key, "from", "to", at, by) VALUES (@eventNo, @key, @from, @to, @at, @by)',
        ({ eventNo, key, to, at }) => [eventNo, (facts) => applyTransition(facts, { key, to, at }, sites)]
      ),
      recordOfTrace: records.statement<FeedTransition>(
        `INSERT INTO transitions (event_no, key, "from", "to", at, by)
         SELECT @event_no, @key, @from, @to, @at, @by WHERE EXISTS (SELECT 1 FROM traces WHERE event_no = @event_no)`,
        (transition, { changes }) => (changes === 1 ? [transition.event_no, (facts) => applyTransition(facts, transition, sites)] : null)
      ),
      find: db.prepare<[number], { doc: string }>('SELECT doc FROM traces WHERE event_no = ?'),
      history: db.prepare<[number], TransitionRecord>(
        `SELECT ${TRANSITION_COLUMNS} FROM transitions WHERE event_no = ? ORDER BY at, seq`
      ),
      // A part costs the part, however deep the position: two seeks of transitions_by_event, the same
      // `at` then later ones. A row value, `(at, seq) > (@at, @seq)`, would pass every transition of
      // that `at` before it (an import writes millions).
      historyFirst: db.prepare<{ eventNo: number; limit: number }, PositionedRow>(
        `SELECT seq, ${TRANSITION_COLUMNS} FROM transitions WHERE event_no = @eventNo ORDER BY at, seq LIMIT @limit`
      ),
      historySameAt: db.prepare<{ eventNo: number; at: number; seq: number; limit: number }, PositionedRow>(
        `SELECT seq, ${TRANSITION_COLUMNS} FROM transitions WHERE event_no = @eventNo AND at = @at AND seq > @seq ORDER BY seq LIMIT @limit`
      ),
      historyLaterAt: db.prepare<{ eventNo: number; at: number; limit: number }, PositionedRow>(
        `SELECT seq, ${TRANSITION_COLUMNS} FROM transitions WHERE event_no = @eventNo AND at > @at ORDER BY at, seq LIMIT @limit`
      ),
      replace: records.statement<[number, string, string], TraceRecord>(
        `INSERT INTO traces (event_no, doc, output) VALUES (?, ?, ?)
         ON CONFLICT (event_no) DO UPDATE SET doc = excluded.doc, output = excluded.output`,
        ([eventNo], _result, trace) => [eventNo, (facts) => applyTrace(facts, trace, sites)]
      )
    }
    const { current, createWithStatus, setStatus, record, create, recordOfTrace, replace } = this.statements
    this.create = records.transaction((eventNo: number, now: number) => {
      create({ eventNo, template, outputTemplate, now, nowText: JSON.stringify(now) }, undefined)
    })
    this.record = records.transaction((transitions: readonly FeedTransition[]) =>
      transitions.reduce((added, transition) => added + recordOfTrace(transition, undefined).changes, 0)
    )
    this.upsert = records.transaction((traces: readonly TraceRecord[]) => {
      for (const trace of traces) {
        const eventNo = trace.event_no as number
        replace([eventNo, JSON.stringify(trace), traceJson(eventNo, trace, sites)], trace)
      }
      return traces.length
    })
    // Inside an IMMEDIATE transaction: the write lock is taken before the read, so no other process writes in between.
    const statusWrites = new GroupCommit(
      db,
      (eventNo: number, key: string, status: WrittenStatus, now: number, by: string) => {
        const path = pathTo(key)
        const before = current.get({ eventNo, path })
        const output = outputKeys.has(key) ? 1 : 0
        const from = before === undefined ? null : asText(before.value)
        const changed = from !== status
        const shown = storedStatus({ [key]: status }, key)
        const nowText = JSON.stringify(now)
        if (before === undefined) createWithStatus({ eventNo, template, outputTemplate, path, output, status, shown, now, nowText }, { key, changed })
        else setStatus({ eventNo, path, output, status, shown, now, nowText }, { key, changed })
        if (!changed) return false
        record({ eventNo, key, from, to: status, at: now, by }, undefined)
        return true
      },
      { alone: (work) => records.transaction(work), together: (work) => records.withinTransaction(work) }
    )
    this.setStatus = (...args) => statusWrites.submit(...args)
  }

  find(eventNo: number): TraceRecord | null {
    const row = this.statements.find.get(eventNo)
    return row === undefined ? null : (JSON.parse(row.doc) as TraceRecord)
  }

  history(eventNo: number): TransitionRecord[] {
    return this.statements.history.all(eventNo)
  }

  /** One snapshot: a part read whole even while transitions are written. */
  historyPage(eventNo: number, after: HistoryPosition | null, limit: number): HistoryPage {
    return this.db.transaction(() => {
      const { historyFirst, historySameAt, historyLaterAt } = this.statements
      // One more than asked for says whether any follow.
      const wanted = limit + 1
      let rows: PositionedRow[]
      if (after === null) rows = historyFirst.all({ eventNo, limit: wanted })
      else {
        rows = historySameAt.all({ eventNo, at: after.at, seq: after.written, limit: wanted })
        if (rows.length < wanted) rows.push(...historyLaterAt.all({ eventNo, at: after.at, limit: wanted - rows.length }))
      }
      const shown = rows.slice(0, limit)
      const last = shown.at(-1)
      return {
        transitions: shown.map(({ seq: _seq, ...transition }) => transition),
        next: rows.length > limit && last !== undefined ? { at: last.at, written: last.seq } : null
      }
    })()
  }
}
