import type Database from 'better-sqlite3'
import { factsSignature } from '../../domain/audit/kept-facts.js'
import { lookSignature } from '../../domain/audit/kept-look.js'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import type { Sites } from '../../vocabulary.js'
import type { SqliteAudits } from './audits.js'

/**
 * Brings the kept audit in line with the configuration at start, as refreshOutputTexts does the
 * output texts: every row made again from the records when the sites (or the form of the facts)
 * changed, or when there are none yet (a store the service has not kept an audit in before);
 * every row looked at again when only the deadlines changed. Nothing to do is two reads; the work
 * is one IMMEDIATE transaction, so a second process starting at the same time waits and then finds it done.
 */
export function refreshKeptAudits(db: Database.Database, audits: SqliteAudits, sites: Sites, deadlines: StageDeadlines): void {
  const read = db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck()
  const mark = db.prepare<[string, string]>('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value')
  const facts = factsSignature(sites)
  const looks = lookSignature(deadlines)
  const due = () => (read.get('kept_audit_facts') !== facts ? 'facts' : read.get('kept_audit_looks') !== looks ? 'looks' : undefined)
  if (due() === undefined) return
  db.transaction(() => {
    const what = due()
    if (what === undefined) return
    audits.rebuild(what)
    mark.run('kept_audit_facts', facts)
    mark.run('kept_audit_looks', looks)
  }).immediate()
}
