import type Database from 'better-sqlite3'
import type { StoredTrace } from '../../domain/trace.js'

/** A JSON path to one flat key; keys come from the configured sites and stages, never from input. */
const pathTo = (key: string) => `$.${JSON.stringify(key)}`

/** A new document: the initial template with its event number and times filled in. */
const NEW_DOCUMENT = `json_set(@initial, '$.event_no', @eventNo, '$.create_timestamp', @now, '$.update_timestamp', @now)`

/** Traces: one JSON document per event, with the flat slash keys the pipeline writes. */
export class SqliteTraces {
  private readonly statements

  constructor(private readonly db: Database.Database) {
    this.statements = {
      create: db.prepare<{ eventNo: number; initial: string; now: number }>(
        `INSERT INTO traces (event_no, doc) VALUES (@eventNo, ${NEW_DOCUMENT}) ON CONFLICT (event_no) DO NOTHING`
      ),
      // One statement: SQLite runs it under the write lock, so concurrent updates cannot interleave.
      setStatus: db.prepare<{ eventNo: number; initial: string; path: string; status: string; now: number }>(
        `INSERT INTO traces (event_no, doc) VALUES (@eventNo, json_set(${NEW_DOCUMENT}, @path, @status))
         ON CONFLICT (event_no) DO UPDATE SET doc = json_set(doc, @path, @status, '$.update_timestamp', @now)`
      ),
      find: db.prepare<[number], { doc: string }>('SELECT doc FROM traces WHERE event_no = ?'),
      replace: db.prepare(
        'INSERT INTO traces (event_no, doc) VALUES (?, ?) ON CONFLICT (event_no) DO UPDATE SET doc = excluded.doc'
      )
    }
  }

  /** The initial document's text, made once per set of initial keys (the service has one). */
  private readonly templates = new WeakMap<Record<string, string>, string>()

  private template(initial: Record<string, string>): string {
    let text = this.templates.get(initial)
    if (text === undefined) {
      text = JSON.stringify({ event_no: 0, ...initial, create_timestamp: 0, update_timestamp: 0 })
      this.templates.set(initial, text)
    }
    return text
  }

  create(eventNo: number, initial: Record<string, string>, now: number): void {
    this.statements.create.run({ eventNo, initial: this.template(initial), now })
  }

  setStatus(eventNo: number, key: string, status: string, initial: Record<string, string>, now: number): void {
    this.statements.setStatus.run({ eventNo, initial: this.template(initial), path: pathTo(key), status, now })
  }

  find(eventNo: number): StoredTrace | null {
    const row = this.statements.find.get(eventNo)
    return row === undefined ? null : JSON.parse(row.doc)
  }

  upsert(traces: StoredTrace[]): number {
    this.db.transaction(() => {
      for (const trace of traces) this.statements.replace.run(trace.event_no, JSON.stringify(trace))
    })()
    return traces.length
  }
}
