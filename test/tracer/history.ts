import t from 'tap'
import { userWithTokens } from '../helper.js'
import { post } from './fixtures.js'
import { NOW, pipelineApp } from './pipeline.js'

const KKO_CONVERSION = 'stages/baseband_conversion/sites/kko'
const CLASSIFICATION = 'stages/tsar_classification'
const update = (event: number, stage: string, status: string, site = 'kko') => ({ event, site, stage, status })

t.test('history: each change update-trace made, with its writer, from null on a new trace; unchanged updates record nothing', async (t) => {
  const pipeline = await pipelineApp(t)
  const operator = (await userWithTokens(pipeline.app, 'night-operator', 'admin')).access_token
  await pipeline.write('/v1/event-tracer/update-trace', update(1, 'baseband_conversion', 'complete'))
  pipeline.clock.now += 1500
  await pipeline.write('/v1/event-tracer/update-trace', update(1, 'baseband_conversion', 'complete'))
  await pipeline.write('/v1/event-tracer/update-trace', update(1, 'tsar_classification', 'incomplete'))
  pipeline.clock.now += 250
  const reverted = await post(pipeline.app, '/v1/event-tracer/update-trace', operator, update(1, 'baseband_conversion', 'incomplete'))
  t.equal(reverted.statusCode, 200)
  await pipeline.write('/v1/event-tracer/update-trace', update(1, 'tsar_classification', 'complete', 'anywhere'))

  const response = await pipeline.read('/v1/event-tracer/history/1')
  t.equal(response.statusCode, 200)
  t.strictSame(response.json(), {
    event_no: 1,
    transitions: [
      { key: KKO_CONVERSION, from: null, to: 'complete', at: NOW / 1000, by: 'pipeline' },
      { key: KKO_CONVERSION, from: 'complete', to: 'incomplete', at: (NOW + 1750) / 1000, by: 'night-operator' },
      { key: CLASSIFICATION, from: 'incomplete', to: 'complete', at: (NOW + 1750) / 1000, by: 'pipeline' }
    ]
  })
})

t.test('history: create-trace records nothing; a trace without transitions has an empty history', async (t) => {
  const pipeline = await pipelineApp(t)
  await pipeline.write('/v1/event-tracer/create-trace', { event: 2, site: 'gbo' })
  await pipeline.write('/v1/event-tracer/create-trace', { event: 2, site: 'gbo' })
  t.strictSame((await pipeline.read('/v1/event-tracer/history/2')).json(), { event_no: 2, transitions: [] })

  // A trace another program wrote straight into the store: its values have no recorded history.
  await pipeline.app.store.traces.upsert([{ event_no: 3, [KKO_CONVERSION]: 'not_required' }])
  t.strictSame((await pipeline.read('/v1/event-tracer/history/3')).json(), { event_no: 3, transitions: [] })
  await pipeline.write('/v1/event-tracer/update-trace', update(3, 'baseband_conversion', 'complete'))
  t.match((await pipeline.read('/v1/event-tracer/history/3')).json().transitions, [{ from: 'not_required', to: 'complete' }])
})

t.test('history: oldest first by `at`, then in the order written', async (t) => {
  const pipeline = await pipelineApp(t)
  const stages = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']
  // Instances with clocks a little apart: a later write may carry an earlier time.
  const clocks = [NOW + 2000, NOW, NOW + 2000, NOW + 1000]
  for (const [index, stage] of stages.entries()) {
    pipeline.clock.now = clocks[index]!
    await pipeline.write('/v1/event-tracer/update-trace', update(4, stage, 'complete', 'chime'))
  }
  const transitions = (await pipeline.read('/v1/event-tracer/history/4')).json().transitions
  t.strictSame(
    transitions.map((transition: { key: string; at: number }) => [transition.key, transition.at * 1000 - NOW]),
    [
      ['stages/baseband_conversion/sites/chime', 0],
      ['stages/data_replication_to_minoc/sites/chime', 1000],
      ['stages/baseband_callback_request/sites/chime', 2000],
      ['stages/data_registration/sites/chime', 2000]
    ]
  )
})

t.test('history: 404 when the event has neither a trace nor a transition; 400 for a bad event_no; a token is needed', async (t) => {
  const pipeline = await pipelineApp(t)
  await pipeline.report({ event_no: 5, ago: 0 })
  const unknown = await pipeline.read('/v1/event-tracer/history/5')
  t.equal(unknown.statusCode, 404, 'an event without a trace')
  t.strictSame(unknown.json(), { reasons: ['No trace and no transition is known for event 5.'], exception: 'NotFound' })
  t.equal((await pipeline.read('/v1/event-tracer/history/6')).statusCode, 404, 'nothing at all')
  const malformed = await pipeline.read('/v1/event-tracer/history/-1')
  t.equal(malformed.statusCode, 400)
  t.match(malformed.json().reasons, [/^path\.event_no /])
  t.equal((await pipeline.app.inject({ url: '/v1/event-tracer/history/5' })).statusCode, 401)
})

t.test('200 parallel update-trace calls on different keys of one event: exactly 200 transitions', async (t) => {
  // 50 sites × 4 stages: 200 distinct keys.
  const sites = Array.from({ length: 50 }, (_, i) => `site${i}`)
  const pipeline = await pipelineApp(t, { TRACER_SITES: sites.join(',') })
  const stages = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']
  const updates = sites.flatMap((site) => stages.map((stage) => update(42, stage, 'complete', site)))
  await Promise.all(updates.map((body) => pipeline.write('/v1/event-tracer/update-trace', body)))
  const { transitions } = (await pipeline.read('/v1/event-tracer/history/42')).json()
  t.equal(transitions.length, 200)
  t.equal(new Set(transitions.map((transition: { key: string }) => transition.key)).size, 200, 'one for each key')
  t.ok(
    transitions.every((transition: { from: unknown; to: string; by: string }) => transition.to === 'complete' && transition.by === 'pipeline'),
    'each to complete, by the writer'
  )
})
