import t from 'tap'
import { duration, elapsed } from '../../src/domain/audit/details.js'
import { audit, completeTrace, DEADLINES, heartbeat, HOUR, MINUTE, registered, trace } from './fixtures.js'

const detailOf = (result: ReturnType<typeof audit>, rule: string) => result.findings.find((item) => item.rule === rule)?.detail

t.test('each rule words its detail once, one plain sentence with the figures', async (t) => {
  const cases: [string, ReturnType<typeof audit>, string, string][] = [
    [
      'stuck at a site',
      audit({ want: { kko_baseband: true }, trace: completeTrace(), after: 7 * HOUR }),
      'stuck',
      'baseband_callback_request at kko incomplete 7.0 h after the event; deadline 15 min'
    ],
    [
      'stuck: the example of the contract',
      audit({ want: { kko_baseband: true }, trace: trace({ tsar: 'complete', 'baseband_callback_request@kko': 'complete' }), after: 7 * HOUR }),
      'stuck',
      'baseband_conversion at kko incomplete 7.0 h after the event; deadline 6 h'
    ],
    [
      'stuck classification (no site), minutes',
      audit({ trace: null, after: 90 * MINUTE + 3000, settings: { deadlines: { ...DEADLINES, baseband_callback_request: 2 * HOUR } } }),
      'stuck',
      'tsar_classification incomplete 1.5 h after the event; deadline 1 h'
    ],
    [
      'out-of-order, one earlier stage',
      audit({ trace: trace({ 'baseband_conversion@chime': 'complete' }) }),
      'out-of-order',
      'baseband_conversion at chime complete while earlier stage baseband_callback_request is incomplete'
    ],
    [
      'out-of-order, several earlier stages',
      audit({ trace: trace({ 'data_replication_to_minoc@chime': 'complete' }) }),
      'out-of-order',
      'data_replication_to_minoc at chime complete while earlier stages baseband_callback_request, baseband_conversion, data_registration are incomplete'
    ],
    [
      'registered-not-in-datatrail',
      audit({ want: { gbo_baseband: true }, trace: trace({ 'data_registration@gbo': 'complete' }) }),
      'registered-not-in-datatrail',
      'data_registration at gbo complete but datatrail member gbo_baseband is not registered'
    ],
    [
      'datatrail-not-in-trace',
      audit({ datatrail: [registered('baseband')] }),
      'datatrail-not-in-trace',
      'datatrail member baseband is registered but data_registration at chime is incomplete'
    ],
    [
      'classified-not-in-trace',
      audit({ classification: 'astrophysical', trace: trace({ tsar: 'incomplete' }) }),
      'classified-not-in-trace',
      'the event is classified "astrophysical" but tsar_classification is incomplete in the trace'
    ],
    [
      'replicated-with-missing-files, one',
      audit({ trace: completeTrace('chime'), datatrail: [registered('baseband', { missing_files: ['/a'] })] }),
      'replicated-with-missing-files',
      'data_replication_to_minoc at chime complete but datatrail member baseband lists 1 missing file'
    ],
    [
      'replicated-with-missing-files, several',
      audit({ trace: completeTrace('chime'), datatrail: [registered('baseband', { missing_files: ['/a', '/b', '/c'] })] }),
      'replicated-with-missing-files',
      'data_replication_to_minoc at chime complete but datatrail member baseband lists 3 missing files'
    ],
    [
      'file-count-mismatch',
      audit({ trace: completeTrace('chime'), datatrail: [registered('baseband', { num_files: 118 })], heartbeats: [heartbeat(42, 'chime', { files: 120 })] }),
      'file-count-mismatch',
      'heartbeat 42 at chime reports 120 data files but datatrail member baseband has num_files 118'
    ],
    [
      'heartbeat-error',
      audit({ trace: completeTrace('chime'), datatrail: [registered('baseband')], heartbeats: [heartbeat(42, 'chime', { error: 'disk full' })] }),
      'heartbeat-error',
      'heartbeat 42 at chime reports the error "disk full" but baseband_conversion at chime is complete'
    ]
  ]
  for (const [name, result, rule, detail] of cases) t.equal(detailOf(result, rule), detail, name)
})

t.test("another program's error text stays on one line and short", async (t) => {
  const error = `line one\nline "two"${'x'.repeat(500)}`
  const result = audit({ trace: completeTrace('chime'), datatrail: [registered('baseband')], heartbeats: [heartbeat(1, 'chime', { error })] })
  const detail = detailOf(result, 'heartbeat-error')!
  t.notMatch(detail, /\n/)
  t.match(detail, 'reports the error "line one\\nline \\"two\\"xxx')
  t.ok(detail.length < 320, `bounded (${detail.length} characters)`)
})

t.test('durations: deadlines exact in h, min or s; time since the event to a tenth', async (t) => {
  t.strictSame(
    [6 * HOUR, 48 * HOUR, 15 * MINUTE, 90 * MINUTE, 45_000, 1500].map(duration),
    ['6 h', '48 h', '15 min', '90 min', '45 s', '1.5 s']
  )
  t.strictSame(
    [7 * HOUR, 100 * HOUR + 0.26 * HOUR, HOUR, HOUR - 1, 15 * MINUTE, 59_999, 1000].map(elapsed),
    ['7.0 h', '100.3 h', '1.0 h', '60.0 min', '15.0 min', '60.0 s', '1.0 s']
  )
})
