import t from 'tap'
import { addUser, build, expiredToken } from '../helper.js'

/**
 * The exact HTTP sequence of the CHIME/FRB Python client (chime-frb-api): it sends the raw access
 * token as the Authorization header, and on a 401 refreshes with the old token and its refresh
 * token, then retries. Expiry is reached by presenting a token of the same user whose exp has
 * passed, which is what the client holds half an hour later.
 */
t.test('log in, call a /v1 route, 401 after expiry, refresh with the expired token, retry', async (t) => {
  const app = await build(t)
  await addUser(app, 'frb-pipeline', 'pipeline-password', 'writer')
  const json = { 'content-type': 'application/json' }

  const version = await app.inject({ method: 'GET', url: '/version' })
  t.equal(version.statusCode, 200, 'the client probes /version to choose its base URL')

  const login = await app.inject({
    method: 'POST',
    url: '/auth',
    headers: json,
    payload: JSON.stringify({ username: 'frb-pipeline', password: 'pipeline-password' })
  })
  t.equal(login.statusCode, 200)
  const { access_token, refresh_token } = login.json()

  const call = (token: string) =>
    app.inject({
      method: 'GET',
      url: '/v1/event-tracer/baseband-callbacks?start_time_utc=2024-05-01&end_time_utc=2024-05-02',
      headers: { authorization: token }
    })
  t.equal((await call(access_token)).statusCode, 200, 'the raw token, no scheme')

  const stale = await call(expiredToken('frb-pipeline'))
  t.equal(stale.statusCode, 401)
  t.strictSame(stale.json(), { reasons: ['Signature has expired.'], exception: 'InvalidToken' })

  const refreshed = await app.inject({
    method: 'POST',
    url: '/auth/refresh',
    headers: { ...json, authorization: expiredToken('frb-pipeline') },
    payload: JSON.stringify({ refresh_token })
  })
  t.equal(refreshed.statusCode, 200)
  t.strictSame(Object.keys(refreshed.json()), ['access_token'])

  const retried = await call(refreshed.json().access_token)
  t.equal(retried.statusCode, 200)
  t.strictSame(retried.json(), [])
})

t.test("the trace updater's create and update calls", async (t) => {
  const app = await build(t)
  await addUser(app, 'frb-pipeline', 'pipeline-password', 'writer')
  const { access_token } = (
    await app.inject({ method: 'POST', url: '/auth', payload: { username: 'frb-pipeline', password: 'pipeline-password' } })
  ).json()
  const post = (url: string, payload: object) =>
    app.inject({
      method: 'POST',
      url,
      headers: { authorization: access_token, 'content-type': 'application/json' },
      payload: JSON.stringify(payload)
    })

  // TraceUpdater(event_no, site) creates the trace at construction...
  const created = await post('/v1/event-tracer/create-trace', { event: 1714557600, site: 'kko' })
  t.equal(created.statusCode, 200)
  t.strictSame(created.json(), { status: true })
  // ...then each set_*_complete() posts its stage with status 'complete'.
  for (const stage of ['tsar_classification', 'baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']) {
    const updated = await post('/v1/event-tracer/update-trace', { event: 1714557600, site: 'kko', stage, status: 'complete' })
    t.equal(updated.statusCode, 200, stage)
    t.strictSame(updated.json(), { status: true })
  }
  const status = await app.inject({ url: '/v1/event-tracer/event-status/1714557600', headers: { authorization: access_token } })
  const trace = status.json().trace
  t.equal(trace['stages/tsar_classification'], 'complete')
  for (const stage of ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']) {
    t.equal(trace[`stages/${stage}/sites/kko`], 'complete')
    t.equal(trace[`stages/${stage}/sites/chime`], 'incomplete')
  }
})
