import t from 'tap'
import { audit, completeTrace, DEADLINES, found, HOUR, MINUTE, trace, type Case } from './fixtures.js'

const bcr = 'baseband_callback_request'
const everyStageAt = (site: string) =>
  ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc'].map((stage) => `${stage}@${site}`)

t.test('stuck: an incomplete stage once its deadline has passed since the event', async (t) => {
  const cases: [string, Case, string[]][] = [
    ['one ms before the 15 min deadline', { after: 15 * MINUTE - 1 }, []],
    ['exactly at the deadline is stuck', { after: 15 * MINUTE }, [`${bcr}@chime`]],
    ['the classification is stuck with site null at 1 h', { after: HOUR }, ['tsar_classification', `${bcr}@chime`]],
    ['one ms before 1 h the classification is not', { after: HOUR - 1 }, [`${bcr}@chime`]],
    ['a missing trace: every stage incomplete', { after: 48 * HOUR }, ['tsar_classification', ...everyStageAt('chime')]],
    [
      'a trace lacking a key: that key is incomplete',
      { trace: trace({ tsar: 'complete', 'baseband_conversion@chime': 'complete' }), after: 6 * HOUR },
      [`${bcr}@chime`]
    ],
    ['not_required is complete, never stuck', { trace: trace({ tsar: 'not_required', [`${bcr}@chime`]: 'not_required' }), after: HOUR }, []],
    ['an unknown stored value is incomplete', { trace: trace({ tsar: 'done' }), after: HOUR }, ['tsar_classification', `${bcr}@chime`]],
    ['complete stages are not stuck', { trace: completeTrace('chime'), after: 1000 * HOUR }, []],
    [
      'one finding per site and stage, at requested sites only',
      { want: { kko_baseband: true, hco_baseband: true }, after: 15 * MINUTE },
      [`${bcr}@kko`, `${bcr}@hco`]
    ],
    ['a site not requested is never stuck', { want: { gbo_baseband: true }, trace: completeTrace('gbo'), after: 1000 * HOUR }, []],
    [
      'the deadlines are the configured ones',
      { settings: { deadlines: { ...DEADLINES, baseband_conversion: MINUTE } }, trace: trace({ [`${bcr}@chime`]: 'complete' }), after: MINUTE },
      ['baseband_conversion@chime']
    ],
    ['an event in the future is not stuck', { after: -HOUR }, []]
  ]
  for (const [name, c, expected] of cases) {
    const result = audit(c)
    t.strictSame(found(result, 'stuck'), expected, name)
    for (const finding of result.findings.filter((item) => item.rule === 'stuck')) t.equal(finding.severity, 'stuck', name)
  }
})

t.test('stuck findings make the verdict stuck', async (t) => {
  t.equal(audit({ after: 15 * MINUTE }).verdict, 'stuck')
  t.equal(audit({ after: 15 * MINUTE - 1 }).verdict, 'in_progress')
})
