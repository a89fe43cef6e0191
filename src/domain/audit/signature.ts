import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines, type StageDeadlines } from '../stage-deadlines.js'
import type { Sites } from '../../vocabulary.js'
import { factsOf } from './kept-facts.js'
import { lookAt } from './kept-look.js'
import { fixedAuditOf } from './kept-report.js'
import { digestOf, FIXTURE_CLOCKS, FIXTURE_EVENTS, FIXTURE_SITES } from './signature-fixtures.js'

// What the kept audit is made under: a digest of what this code makes of fixed events (signature-fixtures.ts), no version
// to remember to raise. A change of rule, wording, order or form moves it, and the store is rebuilt at start.

/** What the digests are made with; a test passes altered ones to show that a change moves them. */
export interface AuditForms {
  factsOf: typeof factsOf
  lookAt: typeof lookAt
  fixedAuditOf: typeof fixedAuditOf
}

export const AUDIT_FORMS: AuditForms = { factsOf, lookAt, fixedAuditOf }

const FIXTURE_DEADLINES = parseStageDeadlines(DEFAULT_STAGE_DEADLINES)

const fixtureFacts = (forms: AuditForms) =>
  FIXTURE_EVENTS.map((records, index) => forms.factsOf(records.event?.event_no ?? index + 1, records, FIXTURE_SITES))

/** What kept facts depend on besides the records: the configured sites, and how this code reduces records to facts. */
export const factsSignature = (sites: Sites, forms: AuditForms = AUDIT_FORMS): string =>
  JSON.stringify({ sites: sites.names, facts: digestOf(fixtureFacts(forms)) })

/** What a look depends on besides the facts and the clock: the deadlines, and what this code makes of the fixtures at each clock. */
export function lookSignature(deadlines: StageDeadlines, forms: AuditForms = AUDIT_FORMS): string {
  const made = fixtureFacts(forms).flatMap((facts) =>
    FIXTURE_CLOCKS.map((now) => {
      const { look, report, audit } = forms.lookAt(facts, { sites: FIXTURE_SITES, deadlines: FIXTURE_DEADLINES, now })
      return { look, report, audit, fixed: report === null || audit === null ? null : forms.fixedAuditOf(report, audit) }
    })
  )
  return JSON.stringify({ deadlines, looks: digestOf(made) })
}
