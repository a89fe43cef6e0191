import t from 'tap'
import { audit, completeTrace, found, trace, type Case } from './fixtures.js'

const [bcr, conversion, registration, replication] = [
  'baseband_callback_request',
  'baseband_conversion',
  'data_registration',
  'data_replication_to_minoc'
] as const

t.test('out-of-order: one finding per later stage complete while an earlier one at its site is not', async (t) => {
  const cases: [string, Case, string[]][] = [
    ['conversion complete, callback request not', { trace: trace({ [`${conversion}@chime`]: 'complete' }) }, [`${conversion}@chime`]],
    [
      'each later complete stage is a finding of its own',
      { trace: trace({ [`${conversion}@chime`]: 'complete', [`${registration}@chime`]: 'complete' }) },
      [`${conversion}@chime`, `${registration}@chime`]
    ],
    [
      'one finding for a stage with several incomplete stages before it',
      { trace: trace({ [`${bcr}@chime`]: 'complete', [`${replication}@chime`]: 'complete' }) },
      [`${replication}@chime`]
    ],
    ['not_required is complete', { trace: trace({ [`${bcr}@chime`]: 'not_required', [`${conversion}@chime`]: 'complete' }) }, []],
    ['a later not_required stage counts as complete too', { trace: trace({ [`${conversion}@chime`]: 'not_required' }) }, [`${conversion}@chime`]],
    ['in order, partly done', { trace: trace({ [`${bcr}@chime`]: 'complete', [`${conversion}@chime`]: 'complete' }) }, []],
    ['everything complete', { trace: completeTrace('chime') }, []],
    ['a missing trace', { trace: null }, []],
    ['the classification is not an earlier stage of a site', { trace: trace({ tsar: 'incomplete', [`${bcr}@chime`]: 'complete' }) }, []],
    [
      'stages of another site do not count',
      {
        want: { baseband: true, kko_baseband: true },
        trace: trace({ [`${bcr}@kko`]: 'complete', [`${conversion}@chime`]: 'complete', [`${conversion}@kko`]: 'complete' })
      },
      [`${conversion}@chime`]
    ],
    ['a site not requested is not audited', { want: { baseband: true }, trace: trace({ [`${conversion}@kko`]: 'complete' }) }, []]
  ]
  for (const [name, c, expected] of cases) {
    const result = audit(c)
    t.strictSame(found(result, 'out-of-order'), expected, name)
    t.ok(
      result.findings.filter((finding) => finding.rule === 'out-of-order').every((finding) => finding.severity === 'contradiction'),
      `${name}: a contradiction`
    )
  }
})
