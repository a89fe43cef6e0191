import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines, type StageDeadlines } from '../stage-deadlines.js'
import type { Sites } from '../../vocabulary.js'
import { factsOf } from './kept-facts.js'
import { lookAt } from './kept-look.js'
import { fixedAuditOf } from './kept-report.js'
import { digestOf, FIXTURE_CLOCKS, FIXTURE_EVENTS, FIXTURE_SITES } from './signature-fixtures.js'

/*
 * What the kept audit is made under. A store keeps, beside each event's records, facts reduced from
 * them and the audit made of those facts (report, fixed text, verdict, next deadline, stuck stages);
 * a release that reduces or audits differently must make them again. Rather than a version number
 * someone has to remember to raise, each signature holds a digest of what this code makes of a fixed
 * set of events (signature-fixtures.ts): a change to a rule, a finding's wording or order, or the
 * form of a kept record changes the digest, and a store made under another signature is rebuilt
 * at the next start. Computed at each start (well under a millisecond per event).
 */

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

/** The digest of the facts this code reduces the fixtures' records to. */
export const factsDigest = (forms: AuditForms = AUDIT_FORMS): string => digestOf(fixtureFacts(forms))

/** The digest of everything kept of the fixtures' audits: at each fixture clock, the look, its report and audit, and the fixed text. */
export function looksDigest(forms: AuditForms = AUDIT_FORMS): string {
  const made = fixtureFacts(forms).flatMap((facts) =>
    FIXTURE_CLOCKS.map((now) => {
      const { look, report, audit } = forms.lookAt(facts, { sites: FIXTURE_SITES, deadlines: FIXTURE_DEADLINES, now })
      return { look, report, audit, fixed: report === null || audit === null ? null : forms.fixedAuditOf(report, audit) }
    })
  )
  return digestOf(made)
}

/**
 * What kept facts depend on besides the records: the configured sites, and how this code reduces
 * records to facts. A store whose facts were made under another signature makes them all again at start.
 */
export const factsSignature = (sites: Sites, forms: AuditForms = AUDIT_FORMS): string =>
  JSON.stringify({ sites: sites.names, facts: factsDigest(forms) })

/**
 * What a look (with its report and fixed text) depends on besides the facts and the clock: the
 * deadlines, and the rules, wording, order and forms of this code. A store whose looks were made
 * under another signature looks at every event again at start.
 */
export const lookSignature = (deadlines: StageDeadlines, forms: AuditForms = AUDIT_FORMS): string =>
  JSON.stringify({ deadlines, looks: looksDigest(forms) })
