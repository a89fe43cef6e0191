import t from 'tap'
import type { AuditFinding } from '../../schemas/audit.js'
import { finding, findingOrder } from '../../src/domain/audit/rules.js'
import { audit, heartbeat, HOUR, member, registered, SITES, trace } from './fixtures.js'

const label = (item: AuditFinding) => `${item.site ?? '-'} ${item.stage ?? '-'} ${item.rule}`

t.test('findings by site (configured order, null first), stage (pipeline order, null first), then rule', async (t) => {
  const expected = [
    finding('stuck', null, null, ''),
    finding('classified-not-in-trace', null, 'tsar_classification', ''),
    finding('stuck', null, 'tsar_classification', ''),
    finding('heartbeat-error', 'chime', 'baseband_conversion', ''),
    finding('datatrail-not-in-trace', 'chime', 'data_registration', ''),
    finding('file-count-mismatch', 'chime', 'data_registration', ''),
    finding('out-of-order', 'chime', 'data_registration', ''),
    finding('stuck', 'kko', 'baseband_callback_request', ''),
    finding('out-of-order', 'gbo', 'baseband_conversion', ''),
    finding('stuck', 'gbo', 'data_replication_to_minoc', ''),
    finding('out-of-order', 'hco', null, '')
  ]
  for (const shuffled of [[...expected].reverse(), [...expected.slice(5), ...expected.slice(0, 5)]]) {
    t.strictSame(shuffled.sort(findingOrder(SITES.names)).map(label), expected.map(label))
  }
})

t.test('an audited event lists its findings in that order', async (t) => {
  const result = audit({
    want: { hco_baseband: true, kko_baseband: true, baseband: true },
    trace: trace({
      'baseband_conversion@chime': 'complete',
      'data_registration@chime': 'complete',
      'baseband_callback_request@kko': 'complete',
      'data_replication_to_minoc@kko': 'complete'
    }),
    datatrail: [registered('kko_baseband', { num_files: 4, missing_files: ['/x'] }), member('hco_baseband', { registered: true })],
    heartbeats: [heartbeat(5, 'kko', { files: 5, error: 'lost' })],
    after: 7 * HOUR
  })
  t.strictSame(result.findings.map(label), [
    '- tsar_classification stuck',
    'chime baseband_callback_request stuck',
    'chime baseband_conversion out-of-order',
    'chime data_registration out-of-order',
    'chime data_registration registered-not-in-datatrail',
    'kko baseband_conversion stuck',
    'kko data_registration datatrail-not-in-trace',
    'kko data_registration file-count-mismatch',
    'kko data_replication_to_minoc out-of-order',
    'kko data_replication_to_minoc replicated-with-missing-files',
    'hco baseband_callback_request stuck',
    'hco baseband_conversion stuck',
    'hco data_registration datatrail-not-in-trace'
  ])
  t.strictSame(result.sites, ['chime', 'kko', 'hco'])
  t.equal(result.verdict, 'contradiction')
})
