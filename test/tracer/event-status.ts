import t from 'tap'
import { event, get, post, putEvents, tracerApp } from './fixtures.js'

const member = {
  registered: true,
  should_be_at_minoc: true,
  larger_dataset: { name: 'baseband-1', scope: 'chime.frb', preferred_storage_elements: ['minoc'], deletion_policy: 'keep' },
  data_path: '/data/chime/baseband/raw/2024/05/01/astro_1',
  num_files: 1024,
  missing_files: ['/data/chime/baseband/raw/2024/05/01/astro_1/baseband_1_12.h5']
}
const heartbeat = (heartbeat_id: number, site = 'kko') => ({
  event_no: 1,
  heartbeat_id,
  site,
  sent: { trigger_time: '2024-05-01T10:00:05Z', error: null },
  received: { total_data_files: 1024, dir_size_gb: 12.5, finished_time: '2024-05-01T10:30:00Z', heartbeat_sent_unix_s: 1714559400.5 }
})
const emptyMember = { registered: false, should_be_at_minoc: false, larger_dataset: {}, data_path: '', num_files: 0, missing_files: [] }

t.test('the status of an event compiled from every part', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  await putEvents(app, [
    event(1, '2024-05-01T10:00:00Z', {
      tsar_classification: 'astrophysical',
      actions: { want: { intensity: true, baseband: true, kko_baseband: true }, got: { intensity: true } }
    })
  ])
  await post(app, '/v1/event-tracer/update-trace', writer, { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete' })
  await post(app, '/v1/event-tracer/datatrail/1/kko_baseband', writer, member, 'PUT')
  await post(app, '/v1/event-tracer/heartbeats', writer, [heartbeat(9), heartbeat(3, 'gbo')])

  const response = await get(app, '/v1/event-tracer/event-status/1', reader)
  t.equal(response.statusCode, 200)
  const status = response.json()
  t.strictSame(Object.keys(status), ['actions', 'tsar_classification', 'datatrail', 'trace', 'heartbeats', 'event_no', 'update_timestamp'])
  t.strictSame(status.actions, { want: { intensity: true, baseband: true, kko_baseband: true }, got: { intensity: true } })
  t.equal(status.tsar_classification, 'astrophysical')
  t.strictSame(Object.keys(status.datatrail), ['intensity', 'baseband', 'kko_baseband', 'gbo_baseband', 'hco_baseband'])
  t.strictSame(status.datatrail.kko_baseband, member)
  t.strictSame(status.datatrail.intensity, emptyMember, 'a member never written has every field at its default')
  t.equal(status.trace['stages/baseband_conversion/sites/kko'], 'complete')
  t.equal(status.trace['stages/baseband_conversion/sites/chime'], 'incomplete')
  t.strictSame(
    status.heartbeats.map((h: { heartbeat_id: number }) => h.heartbeat_id),
    [3, 9],
    'ordered by heartbeat_id'
  )
  const { event_no: _eventNo, ...withoutEventNo } = heartbeat(3, 'gbo')
  t.strictSame(status.heartbeats[0], withoutEventNo, 'records without event_no')
  t.equal(status.event_no, 1)
  t.ok(status.update_timestamp >= status.trace.update_timestamp, 'the latest of its parts')
  t.ok(status.update_timestamp > 1.7e9)
})

t.test('an event known only by its trace: every other part at its default', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  await post(app, '/v1/event-tracer/create-trace', writer, { event: 77, site: 'chime' })
  const status = (await get(app, '/v1/event-tracer/event-status/77', reader)).json()
  t.strictSame(status.actions, { want: {}, got: {} })
  t.equal(status.tsar_classification, 'unclassified')
  t.strictSame(status.heartbeats, [])
  t.ok(Object.values(status.datatrail).every((m) => JSON.stringify(m) === JSON.stringify(emptyMember)))
  t.equal(status.update_timestamp, status.trace.update_timestamp)
})

t.test('an event without a trace reads every stage incomplete and update_timestamp 0 in the trace', async (t) => {
  const { app, reader } = await tracerApp(t)
  await putEvents(app, [event(5, '2024-05-01T10:00:00Z')])
  const status = (await get(app, '/v1/event-tracer/event-status/5', reader)).json()
  t.equal(status.trace.update_timestamp, 0)
  t.ok(Object.entries(status.trace).every(([key, value]) => !key.startsWith('stages/') || value === 'incomplete'))
  t.ok(status.update_timestamp > 0, 'the event itself was written')
})

t.test('unknown event_no is 404; a malformed one 400; a word is no route', async (t) => {
  const { app, reader } = await tracerApp(t)
  const unknown = await get(app, '/v1/event-tracer/event-status/123456', reader)
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().exception, 'NotFound')
  for (const value of ['-1', '1.5', '9007199254740992', '0x10']) {
    const response = await get(app, `/v1/event-tracer/event-status/${value}`, reader)
    t.equal(response.statusCode, 400, value)
    t.match(response.json(), { exception: 'BadRequest', reasons: [/^path\.event_no /] }, value)
  }
  t.strictSame((await get(app, '/v1/event-tracer/event-status/abc', reader)).json(), { reasons: ['No route GET /v1/event-tracer/event-status/abc.'], exception: 'NotFound' })
  t.equal((await get(app, '/v1/event-tracer/event-status/9007199254740991', reader)).statusCode, 404, '2^53-1 is valid')
  t.equal((await get(app, '/v1/event-tracer/event-status/0', reader)).statusCode, 404, '0 is valid')
})
