import t, { type Test } from 'tap'
import { audit, completeTrace, found, member, registered, trace, type Case } from './fixtures.js'

const registration = 'data_registration'
const replication = 'data_replication_to_minoc'

function check(t: Test, rule: Parameters<typeof found>[1], cases: [string, Case, string[]][]) {
  for (const [name, c, expected] of cases) {
    const result = audit(c)
    t.strictSame(found(result, rule), expected, name)
    for (const finding of result.findings.filter((item) => item.rule === rule)) t.equal(finding.severity, 'contradiction', name)
  }
}

t.test('registered-not-in-datatrail: registration complete, the member not registered', async (t) => {
  const done = trace({ [`${registration}@chime`]: 'complete' })
  check(t, 'registered-not-in-datatrail', [
    ['member registered false', { trace: done, datatrail: [member('baseband', { registered: false })] }, [`${registration}@chime`]],
    ['a missing member reads as registered false', { trace: done }, [`${registration}@chime`]],
    ['a member written without `registered`', { trace: done, datatrail: [member('baseband', { num_files: 3 })] }, [`${registration}@chime`]],
    ['only boolean true is registered', { trace: done, datatrail: [member('baseband', { registered: 'yes' })] }, [`${registration}@chime`]],
    ['not_required registration is complete', { trace: trace({ [`${registration}@chime`]: 'not_required' }) }, [`${registration}@chime`]],
    ['member registered: agreement', { trace: done, datatrail: [registered('baseband')] }, []],
    ['registration incomplete', { trace: trace({}), datatrail: [] }, []],
    [
      "the primary site's member is `baseband`, not `chime_baseband`",
      { trace: done, datatrail: [registered('chime_baseband')] },
      [`${registration}@chime`]
    ],
    [
      "another site's member is `{site}_baseband`",
      { want: { kko_baseband: true }, trace: trace({ [`${registration}@kko`]: 'complete' }), datatrail: [registered('baseband')] },
      [`${registration}@kko`]
    ],
    [
      'a site not requested is not audited',
      { want: { baseband: true }, trace: trace({ [`${registration}@kko`]: 'complete' }), datatrail: [registered('baseband')] },
      []
    ]
  ])
})

t.test('datatrail-not-in-trace: the member registered, registration incomplete', async (t) => {
  check(t, 'datatrail-not-in-trace', [
    ['registration incomplete', { trace: trace({ [`${registration}@chime`]: 'incomplete' }), datatrail: [registered('baseband')] }, [`${registration}@chime`]],
    ['a missing trace', { trace: null, datatrail: [registered('baseband')] }, [`${registration}@chime`]],
    ['a missing key', { trace: trace({}), datatrail: [registered('baseband')] }, [`${registration}@chime`]],
    ['registration complete', { trace: completeTrace('chime'), datatrail: [registered('baseband')] }, []],
    ['registration not_required', { trace: trace({ [`${registration}@chime`]: 'not_required' }), datatrail: [registered('baseband')] }, []],
    ['a missing member is not registered', { trace: null }, []],
    [
      'the member of another site',
      {
        want: { baseband: true, hco_baseband: true },
        trace: trace({ [`${registration}@chime`]: 'complete' }),
        datatrail: [registered('baseband'), registered('hco_baseband')]
      },
      [`${registration}@hco`]
    ],
    ['a site not requested', { want: { baseband: true }, trace: completeTrace('chime'), datatrail: [registered('baseband'), registered('gbo_baseband')] }, []]
  ])
})

t.test('replicated-with-missing-files: replication complete, the member lists missing files', async (t) => {
  const done = trace({ [`${replication}@chime`]: 'complete' })
  check(t, 'replicated-with-missing-files', [
    ['two missing files', { trace: done, datatrail: [registered('baseband', { missing_files: ['/a', '/b'] })] }, [`${replication}@chime`]],
    ['registered or not, missing files contradict', { trace: done, datatrail: [member('baseband', { missing_files: ['/a'] })] }, [`${replication}@chime`]],
    [
      'not_required replication is complete',
      { trace: trace({ [`${replication}@chime`]: 'not_required' }), datatrail: [registered('baseband', { missing_files: ['/a'] })] },
      [`${replication}@chime`]
    ],
    ['no missing file', { trace: done, datatrail: [registered('baseband')] }, []],
    ['a missing member lists none', { trace: done }, []],
    ['replication incomplete', { trace: trace({}), datatrail: [registered('baseband', { missing_files: ['/a'] })] }, []],
    ['a site not requested', { want: { kko_baseband: true }, trace: done, datatrail: [registered('baseband', { missing_files: ['/a'] })] }, []]
  ])
})
