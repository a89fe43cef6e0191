import t, { type Test } from 'tap'
import { optionalWindow, parseUtcTime, readUtcTime, requiredWindow, toIsoUtc } from '../../src/domain/time-window.js'
import { AppError } from '../../src/app-error.js'
import { toAppError } from '../../src/infrastructure/http/error-mapping.js'
import { fromRequest } from '../../src/infrastructure/http/request-input.js'

const utc = (text: string) => Date.parse(text)

t.test('accepted forms', async (t) => {
  const cases: [string, string][] = [
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2024-05-01T10:20', '2024-05-01T10:20:00.000Z'],
    ['2024-05-01T10:20:30', '2024-05-01T10:20:30.000Z'],
    ['2024-05-01T10:20:30Z', '2024-05-01T10:20:30.000Z'],
    ['2024-05-01T10:20:30.5Z', '2024-05-01T10:20:30.500Z'],
    ['2024-05-01T10:20:30.123456789Z', '2024-05-01T10:20:30.123Z'],
    ['2024-05-01T10:20:30.999999+00:00', '2024-05-01T10:20:30.999Z'],
    ['2024-05-01T12:20:30+02:00', '2024-05-01T10:20:30.000Z'],
    ['2024-05-01T00:20-03:30', '2024-05-01T03:50:00.000Z'],
    ['2024-12-31T23:59:59.999Z', '2024-12-31T23:59:59.999Z'],
    // Python's str(datetime): a space instead of T, with or without a zone.
    ['2026-11-22 11:02:43.430774', '2026-11-22T11:02:43.430Z'],
    ['2026-11-22 11:02:43.430774+00:00', '2026-11-22T11:02:43.430Z'],
    ['2026-11-22 11:02:43-05:00', '2026-11-22T16:02:43.000Z'],
    ['2024-05-01 10:20', '2024-05-01T10:20:00.000Z'],
    ['2024-05-01 10:20Z', '2024-05-01T10:20:00.000Z'],
    // Offsets at their edges: hours 00-23, minutes 00-59.
    ['2024-05-01T23:59+23:59', '2024-05-01T00:00:00.000Z'],
    ['2024-05-01T00:00-23:59', '2024-05-01T23:59:00.000Z'],
    ['2024-05-01T00:00+00:59', '2024-04-30T23:01:00.000Z'],
    ['2024-05-01T00:00-00:00', '2024-05-01T00:00:00.000Z']
  ]
  for (const [text, iso] of cases) t.equal(parseUtcTime(text), utc(iso), text)
})

t.test('refused forms and impossible dates', async (t) => {
  for (const text of [
    '2024-02-30',
    '2023-02-29',
    '2024-13-01',
    '2024-00-10',
    '2024-05-01T24:00',
    '2024-05-01T10:60',
    '2024-05-01T10:20:61',
    '2024-5-1',
    '20240501',
    '2024-05-01T10',
    '2024-05-01  10:20',
    '2024-05-01 10',
    '2024-05-01 ',
    ' 2024-05-01 10:20',
    '2024-05-01 10:20 ',
    '2024-05-01\t10:20',
    '2024-05-01T 10:20',
    '2024-05-01 10:20 +02:00',
    '2024-05-01T10:20+24:00',
    '2024-05-01T10:20-24:00',
    '2024-05-01T10:20+23:60',
    '2024-05-01T10:20-00:60',
    '2024-05-01T10:20+99:99',
    '2024-05-01 10:20:30+25:00',
    '2024-05-01T10:20:30.Z',
    '2024-05-01T10:20:30.1234567890Z',
    '2024-05-01T10:20+0200',
    '2024-05-01Z',
    'yesterday',
    '1714557600',
    ''
  ]) {
    t.equal(parseUtcTime(text), undefined, JSON.stringify(text))
  }
})

t.test('every year from 0000 to 9999 reads back as the time it names; what lands outside them is refused, saying so', async (t) => {
  const cases: [string, string][] = [
    ['0000-01-01', '0000-01-01T00:00:00.000Z'],
    ['0001-02-03T04:05:06.007Z', '0001-02-03T04:05:06.007Z'],
    ['0050-06-15', '0050-06-15T00:00:00.000Z'],
    ['0099-12-31T23:59:59.999Z', '0099-12-31T23:59:59.999Z'],
    ['0004-02-29', '0004-02-29T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59.999+23:59', '9999-12-31T00:00:59.999Z'],
    ['0000-01-01T23:59-23:59', '0000-01-02T23:58:00.000Z']
  ]
  for (const [text, iso] of cases) {
    const reading = readUtcTime(text)
    t.ok('time' in reading && toIsoUtc(reading.time) === iso, `${text} reads back as ${iso}`)
  }
  t.equal(parseUtcTime('0003-02-29'), undefined, 'year 3 was no leap year')
  for (const [text, instant] of <[string, string][]>[
    ['9999-12-31T23:59:59.999-23:59', '+010000-01-01T23:58:59.999Z'],
    ['9999-12-31T23:00-01:00', '+010000-01-01T00:00:00.000Z'],
    ['0000-01-01T00:00:00+00:01', '-000001-12-31T23:59:00.000Z']
  ]) {
    const reading = readUtcTime(text)
    t.strictSame(reading, {
      refused: `names an instant outside the years 0000 to 9999 in UTC (${instant}), which could not be written back as an RFC 3339 time (got ${JSON.stringify(text)})`,
      outside: true
    })
  }
})

/** The domain's refusal as the HTTP layer answers it for a query: a 400 naming the parameter. */
function badRequestNaming(t: Test, run: () => unknown, field: string) {
  try {
    fromRequest(['query'], run)
    t.fail(`no error; expected a 400 naming ${field}`)
  } catch (thrown) {
    const error = toAppError(thrown)
    t.ok(error instanceof AppError && error.statusCode === 400, 'a 400')
    t.match(error.reasons, [new RegExp(`^query\\.${field} `)], `names ${field}`)
  }
}

t.test('required windows: both bounds, half-open, at most MAX_WINDOW_DAYS', async (t) => {
  t.strictSame(requiredWindow({ start_time_utc: '2024-05-01', end_time_utc: '2024-05-02' }, 366), {
    start: utc('2024-05-01T00:00:00Z'),
    end: utc('2024-05-02T00:00:00Z')
  })
  badRequestNaming(t, () => requiredWindow({ start_time_utc: '2024-02-30', end_time_utc: '2024-03-02' }, 366), 'start_time_utc')
  badRequestNaming(t, () => requiredWindow({ start_time_utc: '2024-03-01', end_time_utc: 'tomorrow' }, 366), 'end_time_utc')
  badRequestNaming(t, () => requiredWindow({ start_time_utc: '2024-03-01', end_time_utc: '2024-03-01' }, 366), 'end_time_utc')
  badRequestNaming(t, () => requiredWindow({ start_time_utc: '2024-03-02', end_time_utc: '2024-03-01' }, 366), 'end_time_utc')
  t.ok(requiredWindow({ start_time_utc: '2024-01-01', end_time_utc: '2024-01-31' }, 30), 'exactly 30 days is allowed')
  badRequestNaming(t, () => requiredWindow({ start_time_utc: '2024-01-01', end_time_utc: '2024-01-31T00:00:00.001Z' }, 30), 'end_time_utc')
})

t.test('optional windows default to the last 7 days', async (t) => {
  const now = utc('2024-05-10T12:00:00Z')
  const week = 7 * 86_400_000
  t.strictSame(optionalWindow({}, 366, now), { start: now - week, end: now })
  t.strictSame(optionalWindow({ start_time_utc: '2024-05-01' }, 366, now), { start: utc('2024-05-01'), end: now })
  t.strictSame(optionalWindow({ end_time_utc: '2024-05-08' }, 366, now), { start: utc('2024-05-08') - week, end: utc('2024-05-08') })
  badRequestNaming(t, () => optionalWindow({ start_time_utc: '2024-06-01' }, 366, now), 'start_time_utc')
  badRequestNaming(t, () => optionalWindow({ start_time_utc: '2020-01-01' }, 366, now), 'end_time_utc')
})
