import type Database from 'better-sqlite3'
import { factsSignature, lookSignature } from '../../domain/audit/signature.js'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import type { Sites } from '../../vocabulary.js'
import type { SqliteAudits } from './audits.js'

/**
 * Brings the kept audit in line with the configuration and this release at start, as
 * refreshOutputTexts does the output texts: every row made again from the records when the sites
 * or the reduction of records to facts changed (factsSignature), or when there are none yet (a
 * store the service has not kept an audit in before); every row looked at again when only the
 * deadlines or the rules, wording, order or forms of the audit changed (lookSignature). Nothing to
 * do is two reads; the work is one IMMEDIATE transaction, so a second process starting at the same
 * time waits and then finds it done. Resolves to what was made again (`first`: the store's first kept audit).
 */
export function refreshKeptAudits(db: Database.Database, audits: SqliteAudits, sites: Sites, deadlines: StageDeadlines): 'facts' | 'looks' | 'first' | undefined {
  const read = db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck()
  const mark = db.prepare<[string, string]>('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value')
  const facts = factsSignature(sites)
  const looks = lookSignature(deadlines)
  const due = () => (read.get('kept_audit_facts') !== facts ? 'facts' : read.get('kept_audit_looks') !== looks ? 'looks' : undefined)
  if (due() === undefined) return undefined
  return db
    .transaction(() => {
      const what = due()
      if (what === undefined) return undefined
      const first = read.get('kept_audit_facts') === undefined
      audits.rebuild(what)
      mark.run('kept_audit_facts', facts)
      mark.run('kept_audit_looks', looks)
      return first ? 'first' : what
    })
    .immediate()
}
