import type Database from 'better-sqlite3'
import type { TraceRecord } from '../../domain/records.js'
import { newTraceDocument } from '../../domain/trace.js'
import type { Sites, StageStatus } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { TraceCollection } from '../port.js'

/** A JSON path to one flat key; keys come from the configured sites and stages, never from input. */
const pathTo = (key: string) => `$.${JSON.stringify(key)}`

/** A new document: the sites' template with its event number and times filled in. */
const NEW_DOCUMENT = `json_set(@template, '$.event_no', @eventNo, '$.create_timestamp', @now, '$.update_timestamp', @now)`

/** Traces: one JSON document per event, with the flat slash keys the pipeline writes. */
export class SqliteTraces implements Adapter<TraceCollection> {
  private readonly statements
  /** The text of a new trace of the configured sites, with every key `incomplete`. */
  private readonly template: string

  constructor(
    private readonly db: Database.Database,
    sites: Sites
  ) {
    this.template = JSON.stringify(newTraceDocument(sites, 0, 0))
    this.statements = {
      create: db.prepare<{ eventNo: number; template: string; now: number }>(
        `INSERT INTO traces (event_no, doc) VALUES (@eventNo, ${NEW_DOCUMENT}) ON CONFLICT (event_no) DO NOTHING`
      ),
      // One statement: SQLite runs it under the write lock, so concurrent updates cannot interleave.
      setStatus: db.prepare<{ eventNo: number; template: string; path: string; status: string; now: number }>(
        `INSERT INTO traces (event_no, doc) VALUES (@eventNo, json_set(${NEW_DOCUMENT}, @path, @status))
         ON CONFLICT (event_no) DO UPDATE SET doc = json_set(doc, @path, @status, '$.update_timestamp', @now)`
      ),
      find: db.prepare<[number], { doc: string }>('SELECT doc FROM traces WHERE event_no = ?'),
      replace: db.prepare<[number, string]>(
        'INSERT INTO traces (event_no, doc) VALUES (?, ?) ON CONFLICT (event_no) DO UPDATE SET doc = excluded.doc'
      )
    }
  }

  create(eventNo: number, now: number): void {
    this.statements.create.run({ eventNo, template: this.template, now })
  }

  setStatus(eventNo: number, key: string, status: StageStatus, now: number): void {
    this.statements.setStatus.run({ eventNo, template: this.template, path: pathTo(key), status, now })
  }

  find(eventNo: number): TraceRecord | null {
    const row = this.statements.find.get(eventNo)
    return row === undefined ? null : (JSON.parse(row.doc) as TraceRecord)
  }

  upsert(traces: readonly TraceRecord[]): number {
    this.db.transaction(() => {
      for (const trace of traces) this.statements.replace.run(trace.event_no as number, JSON.stringify(trace))
    })()
    return traces.length
  }
}
