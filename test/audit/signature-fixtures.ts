import t from 'tap'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import { factsOf } from '../../src/domain/audit/kept-facts.js'
import { lookAt } from '../../src/domain/audit/kept-look.js'
import { FIXTURE_CLOCKS, FIXTURE_EVENTS, FIXTURE_SITES } from '../../src/domain/audit/signature-fixtures.js'
import { AUDIT_FORMS, factsSignature, lookSignature, type AuditForms } from '../../src/domain/audit/signature.js'
import { AUDIT_RULES } from '../../src/vocabulary.js'

/*
 * The kept audit is made again when its signature moves, and the signature only moves for a rule
 * that some fixture meets: a rule no fixture meets would leave stores upgraded to its release
 * with reports made under the old rules.
 */

const DEADLINES = parseStageDeadlines(DEFAULT_STAGE_DEADLINES)

const findingsAt = (now: number) =>
  FIXTURE_EVENTS.flatMap((records, index) => {
    const facts = factsOf(records.event?.event_no ?? index + 1, records, FIXTURE_SITES)
    return lookAt(facts, { sites: FIXTURE_SITES, deadlines: DEADLINES, now }).audit?.findings ?? []
  })

t.test('every audit rule is met by a signature fixture, so adding one moves the signature', async (t) => {
  const met = new Set(FIXTURE_CLOCKS.flatMap((now) => findingsAt(now).map((finding) => finding.rule)))
  for (const rule of AUDIT_RULES) t.ok(met.has(rule), rule)
})

t.test('the fixtures hold a classified event contradictory and stuck on the classification, and an unclassified one only stuck', async (t) => {
  const late = FIXTURE_CLOCKS.at(-1)!
  const onClassification = (classification: string) => {
    const index = FIXTURE_EVENTS.findIndex((records) => records.event?.tsar_classification === classification && records.trace !== null)
    const facts = factsOf(FIXTURE_EVENTS[index]!.event!.event_no, FIXTURE_EVENTS[index]!, FIXTURE_SITES)
    const findings = lookAt(facts, { sites: FIXTURE_SITES, deadlines: DEADLINES, now: late }).audit!.findings
    return findings.filter((finding) => finding.stage === 'tsar_classification').map((finding) => finding.rule)
  }
  t.strictSame(onClassification('rfi'), ['classified-not-in-trace', 'stuck'])
  t.strictSame(onClassification('unclassified'), ['stuck'])
})

t.test('a store kept under the rules before classified-not-in-trace has other signatures, so it is made again', async (t) => {
  const withoutRule: AuditForms = {
    ...AUDIT_FORMS,
    lookAt: (...args) => {
      const look = AUDIT_FORMS.lookAt(...args)
      if (look.audit === null) return look
      return { ...look, audit: { ...look.audit, findings: look.audit.findings.filter((finding) => finding.rule !== 'classified-not-in-trace') } }
    }
  }
  t.not(lookSignature(DEADLINES, withoutRule), lookSignature(DEADLINES), 'the looks')
  const withoutClassification: AuditForms = {
    ...AUDIT_FORMS,
    factsOf: (...args) => {
      const facts = AUDIT_FORMS.factsOf(...args)
      if (facts.event === null) return facts
      const { tsar_classification: _left, ...event } = facts.event
      return { ...facts, event: event as typeof facts.event }
    }
  }
  t.not(factsSignature(FIXTURE_SITES, withoutClassification), factsSignature(FIXTURE_SITES), 'the facts')
})
