import t from 'tap'
import { audit, completeTrace, found, HOUR, registered, trace, type Case } from './fixtures.js'

const CLASSIFICATION = 'tsar_classification'

t.test('classified-not-in-trace: the event record classified, the trace says the classification is incomplete', async (t) => {
  const cases: [string, Case, string[]][] = [
    ['classified, the key incomplete', { classification: 'astrophysical', trace: trace({ tsar: 'incomplete' }) }, [CLASSIFICATION]],
    ['classified, the key missing', { classification: 'rfi', trace: trace({}) }, [CLASSIFICATION]],
    ['classified, no trace at all', { classification: 'ambiguous', trace: null }, [CLASSIFICATION]],
    ['another value the trace holds reads incomplete', { classification: 'rfi', trace: trace({ tsar: 'done' }) }, [CLASSIFICATION]],
    ['classified, the key complete', { classification: 'astrophysical', trace: completeTrace('chime') }, []],
    ['classified, the key not_required (complete)', { classification: 'astrophysical', trace: trace({ tsar: 'not_required' }) }, []],
    ['no classification set', { classification: null, trace: trace({ tsar: 'incomplete' }) }, []],
    ['`unclassified` is no classification', { classification: 'unclassified', trace: trace({ tsar: 'incomplete' }) }, []],
    ['an empty text is no classification', { classification: '', trace: null }, []],
    ['whatever the clock: before the deadline', { classification: 'rfi', trace: null, after: 1 }, [CLASSIFICATION]],
    ['whatever the clock: long after it', { classification: 'rfi', trace: null, after: 72 * HOUR }, [CLASSIFICATION]]
  ]
  for (const [name, c, expected] of cases) {
    const result = audit(c)
    t.strictSame(found(result, 'classified-not-in-trace'), expected, name)
    for (const finding of result.findings.filter((item) => item.rule === 'classified-not-in-trace')) {
      t.match(finding, { severity: 'contradiction', site: null, stage: CLASSIFICATION }, name)
    }
    if (expected.length > 0) t.equal(result.verdict, 'contradiction', `${name}: the verdict`)
  }
})

t.test('past its deadline a classified event is stuck and contradictory on the one stage; an unclassified one only stuck', async (t) => {
  const late = { trace: completeTrace('chime'), datatrail: [registered('baseband')], after: 2 * HOUR }
  delete late.trace['stages/tsar_classification']
  const classified = audit({ ...late, classification: 'astrophysical' })
  t.strictSame(
    classified.findings.map((finding) => `${finding.stage} ${finding.rule}`),
    [`${CLASSIFICATION} classified-not-in-trace`, `${CLASSIFICATION} stuck`],
    'both findings, in rule order on the one stage'
  )
  t.equal(classified.verdict, 'contradiction')
  const unclassified = audit({ ...late, classification: null })
  t.strictSame(found(unclassified, 'stuck'), [CLASSIFICATION])
  t.strictSame(found(unclassified, 'classified-not-in-trace'), [])
  t.equal(unclassified.verdict, 'stuck')
})
