import t from 'tap'
import { addUser, build, expiredToken } from '../helper.js'
import { SseClient } from '../sse.js'
import { event, post } from './fixtures.js'
import { loads, plain, PyDict, type PyValue } from './python-dict.js'
import { allStagesAt, DAY, HOUR, iso, member, NOW, pipelineApp } from './pipeline.js'

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

t.test("the trace updater's Status.not_required: stored as sent, read as complete, kept as sent in history and the stream", async (t) => {
  const pipeline = await pipelineApp(t)
  const { app, reader } = pipeline
  const eventNo = 1714557601
  const KKO_CONVERSION = 'stages/baseband_conversion/sites/kko'
  // An event that asks for baseband data at chime and kko; the pipeline reports each stage.
  await pipeline.write('/v1/events', [event(eventNo, iso(NOW - HOUR), { actions: { want: { baseband: true, kko_baseband: true }, got: {} } })])
  const opened = await app.inject({ url: `/v1/event-tracer/stream?event_no=${eventNo}`, headers: { authorization: reader }, payloadAsStream: true })
  const stream = new SseClient(opened.stream())
  await stream.until(() => stream.comments.length > 0, 'the stream is open')
  t.teardown(() => opened.raw.res.destroy())

  // TraceUpdater.update(stage, Status.not_required) posts the enum's value as it is.
  const updated = await post(app, '/v1/event-tracer/update-trace', pipeline.writer, { event: eventNo, site: 'kko', stage: 'baseband_conversion', status: 'not_required' })
  t.equal(updated.statusCode, 200, updated.body)
  t.strictSame(updated.json(), { status: true })
  t.equal((await app.store.traces.find(eventNo))?.[KKO_CONVERSION], 'not_required', 'stored as sent')
  for (const key of ['tsar', ...allStagesAt('chime'), 'baseband_callback_request@kko', 'data_registration@kko', 'data_replication_to_minoc@kko']) {
    const [stage = '', site = 'chime'] = key === 'tsar' ? ['tsar_classification'] : key.split('@')
    await pipeline.write('/v1/event-tracer/update-trace', { event: eventNo, site, stage, status: 'complete' })
  }
  for (const site of ['baseband', 'kko_baseband']) await pipeline.write(`/v1/event-tracer/datatrail/${eventNo}/${site}`, member(), 'PUT')

  const status = (await pipeline.read(`/v1/event-tracer/event-status/${eventNo}`)).json()
  t.equal(status.trace[KKO_CONVERSION], 'complete', 'event status reads it complete')
  const window = `start_time_utc=${iso(NOW - DAY)}&end_time_utc=${iso(NOW)}`
  const [callback] = (await pipeline.read(`/v1/event-tracer/baseband-callbacks?${window}`)).json()
  t.equal(callback.trace[KKO_CONVERSION], 'complete', 'baseband-callbacks reads it complete')
  const audit = (await pipeline.read(`/v1/event-tracer/audit?${window}`)).json()
  t.match(audit.summary, { events: 1, complete: 1 }, 'the audit counts it complete')
  t.match((await pipeline.read(`/v1/event-tracer/audit/${eventNo}`)).json(), { verdict: 'complete', findings: [] })
  const latency = (await pipeline.read(`/v1/event-tracer/stage-latency?${window}`)).json()
  t.match(latency.stages.find((row: { stage: string; site: string }) => row.stage === 'baseband_conversion' && row.site === 'kko'), { complete: 1, incomplete: 0, p50_s: null }, 'complete, but no completion to time')

  const history = (await pipeline.read(`/v1/event-tracer/history/${eventNo}`)).json()
  t.match(history.transitions[0], { key: KKO_CONVERSION, from: null, to: 'not_required', by: 'pipeline' }, 'history keeps the stored value')
  await stream.until(() => stream.transitions.length >= 9, 'every transition streamed')
  t.match(stream.transitions[0], { event_no: eventNo, key: KKO_CONVERSION, from: null, to: 'not_required' }, 'so does the stream')

  await pipeline.write('/v1/event-tracer/update-trace', { event: eventNo, site: 'kko', stage: 'baseband_conversion', status: 'complete' })
  const after = (await pipeline.read(`/v1/event-tracer/history/${eventNo}`)).json().transitions
  t.match(after[after.length - 1], { key: KKO_CONVERSION, from: 'not_required', to: 'complete' }, 'complete after not_required is a change')

  const refused = await post(app, '/v1/event-tracer/update-trace', pipeline.writer, { event: eventNo, site: 'kko', stage: 'baseband_conversion', status: 'NOT_REQUIRED' })
  t.equal(refused.statusCode, 400)
  t.strictSame(refused.json(), { reasons: ['body.status must be one of complete, incomplete, not_required'], exception: 'BadRequest' })
})

t.test("Events.get_event([...]): the client's batch read, replayed as the client makes it, gives the Dict[str, dict] it declares", async (t) => {
  const pipeline = await pipelineApp(t)
  const { app } = pipeline
  // Events 1000 to 1599 are known.
  const known = Array.from({ length: 600 }, (_, i) => 1000 + i)
  await pipeline.write('/v1/events', known.map((n) => event(n, iso(NOW - n * 1000))))
  const records = new Map<number, unknown>()
  for (const n of known) records.set(n, (await pipeline.read(`/v1/events/${n}`)).json())

  // The client's post: its list as given, the raw token; API.post answers the decoded JSON.
  const apiPost = async (eventIds: number[]) => {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/events/get_events',
      headers: { authorization: pipeline.reader, 'content-type': 'application/json' },
      payload: JSON.stringify({ event_ids: eventIds })
    })
    t.equal(response.statusCode, 200, response.body.slice(0, 200))
    t.match(response.headers['content-type'], /^application\/json/)
    return loads(response.body)
  }
  // Events.get_event(list): under 300 numbers one post, its answer returned as it is; from 300 on,
  // chunks of 300 merged with response.update(resp).
  const getEvent = async (eventNumbers: number[]): Promise<PyValue> => {
    if (eventNumbers.length < 300) return apiPost(eventNumbers)
    const response = new PyDict()
    for (let start = 0; start < eventNumbers.length; start += 300) response.update(await apiPost(eventNumbers.slice(start, start + 300)))
    return response
  }

  for (const count of [1, 299, 300, 601]) {
    // Asked newest number first, from just past the known ones: JSON.parse would reorder them, Python does not.
    const asked = Array.from({ length: count }, (_, i) => 1600 + (count === 1 ? -1 : 1) - i)
    const expected = asked.filter((n) => records.has(n)).map(String)
    const caller = await getEvent(asked)
    t.ok(caller instanceof PyDict, `${count} numbers: the caller gets a dict`)
    if (!(caller instanceof PyDict)) continue
    t.strictSame(caller.keys(), expected, `${count} numbers: keyed by number in decimal, in the order asked; unknown numbers left out`)
    const wrong = caller.keys().filter((key) => !(caller.entries.get(key) instanceof PyDict))
    t.strictSame(wrong, [], `${count} numbers: every value is a dict`)
    const differing = caller.keys().filter((key) => JSON.stringify(plain(caller.entries.get(key)!)) !== JSON.stringify(records.get(Number(key))))
    t.strictSame(differing, [], `${count} numbers: each value is the record GET /v1/events/{n} gives`)
  }

  const once = await getEvent([1599, 1000, 1700, 1234, 1000, 1599])
  t.strictSame(once instanceof PyDict ? once.keys() : once, ['1599', '1000', '1234'], 'each once, where first asked')
  const none = await getEvent([1700, 9999])
  t.ok(none instanceof PyDict && none.keys().length === 0, 'none known: an empty dict')
  // What the array answer did to the client: dict.update of a list of records.
  t.throws(() => new PyDict().update(loads('[{"event_no":1,"snr":1,"dm":null,"timestamp_utc":"","known_source_name":"","tsar_classification":"","actions":{}}]')), { name: 'ValueError', message: /2 is required/ }, 'the replayed update raises on an array, as the client did')

  for (const [body, reason] of [
    [{ event_ids: [] }, 'body.event_ids must NOT have fewer than 1 items'],
    [{ event_ids: Array.from({ length: 1001 }, (_, i) => i) }, 'body.event_ids must NOT have more than 1000 items'],
    [{ event_ids: [1, '2'] }, 'body.event_ids[1] must be integer'],
    [{ event_ids: [-1] }, 'body.event_ids[0] must be >= 0'],
    [{ event_id: [1] }, 'body.event_ids is required'],
    [{ event_ids: [1], event_id: [1] }, 'body.event_id is not allowed']
  ] as const) {
    const refused = await app.inject({ method: 'POST', url: '/v1/events/get_events', headers: { authorization: pipeline.reader }, payload: body })
    t.equal(refused.statusCode, 400, JSON.stringify(body).slice(0, 60))
    t.match(refused.json(), { exception: 'BadRequest', reasons: [reason] })
  }
  t.equal((await app.inject({ method: 'POST', url: '/v1/events/get_events', payload: { event_ids: [1000] } })).statusCode, 401)
})
