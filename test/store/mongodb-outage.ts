import t from 'tap'
import { mongoApp } from './mongo-app.js'
import { engineOnly } from './mongo-backends.js'

const UNAVAILABLE = { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' }

t.test('while the database is away the app answers 503, and serves again when it is back, without a restart', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  const { app, reader } = await mongoApp(t, store)
  const get = (url: string) => app.inject({ url, headers: { authorization: reader } })
  const eventStatus = '/v1/event-tracer/event-status/1'
  const callbacks = '/v1/event-tracer/baseband-callbacks?start_time_utc=2024-05-01&end_time_utc=2024-05-02'
  await store.traces.upsert([{ event_no: 1, 'stages/tsar_classification': 'complete' }])

  engine!.away = true
  for (const url of ['/ready', eventStatus, callbacks]) {
    const response = await get(url)
    t.equal(response.statusCode, 503, url)
    t.strictSame(response.json(), UNAVAILABLE, url)
  }
  t.equal((await get('/health')).statusCode, 200, 'the process itself stays up')

  engine!.away = false
  t.strictSame((await get('/ready')).json(), { status: 'ok' })
  const status = await get(eventStatus)
  t.equal(status.statusCode, 200)
  t.equal(status.json().trace['stages/tsar_classification'], 'complete')
  t.strictSame((await get(callbacks)).json(), [])
})
