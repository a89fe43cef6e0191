import t from 'tap'
import type { AuditFinding } from '../../schemas/audit.js'
import { finding, verdictOf } from '../../src/domain/audit/rules.js'
import { audit, completeTrace, HOUR, MINUTE, registered } from './fixtures.js'

const stuck = finding('stuck', 'chime', 'baseband_conversion', 'late')
const contradiction = finding('out-of-order', 'chime', 'data_registration', 'odd')

t.test('verdict precedence: contradiction > stuck > complete > in_progress', async (t) => {
  const cases: [AuditFinding[], boolean, string][] = [
    [[stuck, contradiction], false, 'contradiction'],
    [[contradiction, stuck], true, 'contradiction'],
    [[contradiction], true, 'contradiction'],
    [[stuck], false, 'stuck'],
    [[stuck], true, 'stuck'],
    [[], true, 'complete'],
    [[], false, 'in_progress']
  ]
  for (const [findings, everyStageComplete, verdict] of cases) {
    t.equal(verdictOf(findings, everyStageComplete), verdict, `${findings.map((item) => item.severity).join('+') || 'none'}, all complete: ${everyStageComplete}`)
  }
})

t.test('the verdict of whole events', async (t) => {
  const done = [registered('baseband')]
  t.equal(audit({ trace: completeTrace('chime'), datatrail: done, after: 100 * HOUR }).verdict, 'complete')
  t.equal(
    audit({ trace: { ...completeTrace('chime'), 'stages/tsar_classification': 'not_required' }, datatrail: done }).verdict,
    'complete',
    'not_required is complete'
  )
  t.equal(audit({ trace: completeTrace('chime'), datatrail: [] }).verdict, 'contradiction', 'registered in the trace only')
  t.equal(audit({ trace: null, after: 10 * MINUTE }).verdict, 'in_progress', 'nothing done, nothing late')
  t.equal(
    audit({ want: { baseband: true, kko_baseband: true }, trace: completeTrace('chime'), datatrail: done }).verdict,
    'in_progress',
    'one requested site still pending'
  )
  t.equal(
    audit({ want: { baseband: true, kko_baseband: true }, trace: completeTrace('chime'), datatrail: done, after: 15 * MINUTE }).verdict,
    'stuck',
    'that site late'
  )
  t.equal(audit({ trace: completeTrace('chime'), datatrail: [], after: 15 * MINUTE }).verdict, 'contradiction')
  t.equal(
    audit({ trace: { ...completeTrace('chime'), 'stages/tsar_classification': 'incomplete' }, datatrail: done }).verdict,
    'in_progress',
    'classification pending'
  )
})
