import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { formatStageDeadlines, parseStageDeadlines } from '../../src/domain/stage-deadlines.js'

const MIN = 60_000
const HOUR = 60 * MIN

t.test('STAGE_DEADLINES defaults to the documented deadlines, in milliseconds', async (t) => {
  t.strictSame(loadConfig({}).STAGE_DEADLINES, {
    tsar_classification: HOUR,
    baseband_callback_request: 15 * MIN,
    baseband_conversion: 6 * HOUR,
    data_registration: 12 * HOUR,
    data_replication_to_minoc: 48 * HOUR
  })
})

t.test('each unit, fractions, spaces, and stages left out keeping their default', async (t) => {
  const cases: [string, Partial<Record<string, number>>][] = [
    ['tsar_classification=90s', { tsar_classification: 90_000 }],
    ['tsar_classification=2m', { tsar_classification: 2 * MIN }],
    ['tsar_classification=3h', { tsar_classification: 3 * HOUR }],
    ['tsar_classification=2d', { tsar_classification: 48 * HOUR }],
    ['baseband_conversion=1.5h', { baseband_conversion: 90 * MIN }],
    [' data_registration = 1d , baseband_callback_request=5m ', { data_registration: 24 * HOUR, baseband_callback_request: 5 * MIN }]
  ]
  for (const [text, changed] of cases) {
    t.strictSame(
      loadConfig({ STAGE_DEADLINES: text }).STAGE_DEADLINES,
      { ...loadConfig({}).STAGE_DEADLINES, ...changed },
      text
    )
  }
})

t.test('a bad STAGE_DEADLINES stops start-up with one line naming it and the fault', async (t) => {
  const cases: [string, RegExp][] = [
    ['classification=1h', /unknown stage "classification"/],
    ['tsar_classification=1w', /tsar_classification "1w": the unit must be s, m, h or d/],
    ['tsar_classification=60', /the unit must be/],
    ['tsar_classification=0h', /longer than zero/],
    ['tsar_classification=0.0001s', /longer than zero/],
    ['baseband_conversion=-6h', /longer than zero/],
    ['tsar_classification=1h,tsar_classification=2h', /names tsar_classification twice/],
    ['tsar_classification', /stage=duration pair/],
    ['tsar_classification=1h=2h', /stage=duration pair/],
    ['tsar_classification=1h,', /empty entry/],
    ['tsar_classification=h', /not a number with a unit/],
    ['tsar_classification=99999999999999d', /too long/]
  ]
  for (const [text, fault] of cases) {
    try {
      loadConfig({ STAGE_DEADLINES: text })
      t.fail(`${text} was accepted`)
    } catch (error) {
      t.equal((error as Error).name, 'ConfigError', text)
      t.match((error as Error).message, /^Invalid configuration: STAGE_DEADLINES /, text)
      t.match((error as Error).message, fault, text)
      t.notMatch((error as Error).message, /\n/, 'one line')
    }
  }
})

t.test('the text form of decoded deadlines parses back to them', async (t) => {
  const deadlines = parseStageDeadlines('baseband_conversion=1.5h,tsar_classification=45s')
  t.strictSame(parseStageDeadlines(formatStageDeadlines(deadlines)), deadlines)
})
