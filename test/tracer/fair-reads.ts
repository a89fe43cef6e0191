import t from 'tap'
import { userWithTokens } from '../helper.js'
import { event, putEvents, tracerApp } from './fixtures.js'

const DAY = 86_400_000
const start = Date.parse('2024-01-01T00:00:00Z')
const YEAR = `start_time_utc=2024-01-01&end_time_utc=2024-12-31`

/** 2,000 baseband events over the year: a stage latency report of the year reads ten pages. */
async function yearApp(t: Parameters<typeof tracerApp>[0]) {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, Array.from({ length: 2000 }, (_, i) => event(i + 1, new Date(start + i * (360 * DAY) / 2000).toISOString())))
  return { app, hog: reader, other: (await userWithTokens(app, 'other', 'reader')).access_token }
}

t.test('expensive reads take turns by user: one user’s many reports do not hold another’s back; beyond its share, 429', async (t) => {
  const { app, hog, other } = await yearApp(t)
  const finished: string[] = []
  // From two addresses: each address also has its share.
  const ask = (who: string, token: string, path: string) =>
    app.inject({ url: `/v1/event-tracer/${path}?${YEAR}`, headers: { authorization: token }, remoteAddress: who === 'hog' ? '192.0.2.1' : '192.0.2.2' }).then((response) => {
      finished.push(`${who} ${response.statusCode}`)
      return response
    })
  // Twelve from one user (its share is eight), then one from another, all at once.
  const hogs = Array.from({ length: 12 }, (_, i) => ask('hog', hog, i % 2 === 0 ? 'stage-latency' : 'audit'))
  const others = ask('other', other, 'stage-latency')
  const responses = await Promise.all([...hogs, others])
  const refused = responses.filter((response) => response.statusCode === 429)
  t.equal(refused.length, 4, 'four of the twelve are beyond the user’s share')
  for (const response of refused) {
    t.equal(response.headers['retry-after'], '2')
    t.match(response.json(), { exception: 'TooManyRequests', reasons: [/^Your user already holds 8 of this instance's responses/] })
  }
  t.equal((await others).statusCode, 200)
  const served = finished.filter((entry) => entry.endsWith(' 200'))
  t.equal(served.length, 9)
  t.equal(served[0], 'other 200', `the other user’s report is done first: ${served.join(', ')}`)
})
