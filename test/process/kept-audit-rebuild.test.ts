import { join } from 'node:path'
import t from 'tap'
import { request, runCli, startServer, startWorkers, stop } from './processes.js'

/*
 * Issue 29, finding 5: an instance that must make its kept audit again listened only once it was
 * done, in one transaction that a kill rolled back, so the next start began again. It now listens
 * first, says how far it has come on /ready, and a start after a kill goes on where it stopped.
 */

const progressOf = (reason: unknown) => {
  const found = /: ([\d,]+) of ([\d,]+) events done/.exec(String(reason))
  return found === null ? null : Number(found[1]!.replaceAll(',', ''))
}

t.test('a start that makes the kept audit again serves meanwhile, and after a kill -9 the next one goes on where it stopped', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password' }
  // A store made under the default deadlines, large enough that a batch of one event each leaves thousands.
  const seeded = await runCli(['seed', '--demo', '--events', '30000', '--days', '30'], env)
  t.equal(seeded.status, 0, seeded.stderr)

  // Other deadlines: every kept row is looked at again, one event a transaction.
  const changed = { ...env, STAGE_DEADLINES: 'data_registration=6h', TRACER_REBUILD_BATCH: '1' }
  const first = await startServer(t, changed)
  t.match(first.output.join('\n'), /The kept audit is being made again \(from the kept facts\)/, 'the start said it makes the audit again')
  t.equal((await request(`${first.url}/health`)).status, 200, 'live')
  const ready = await request(`${first.url}/ready`)
  t.equal(ready.status, 503, 'not ready while the audit is made again')
  t.match(ready.body, { exception: 'ServiceUnavailable', reasons: [/^The kept audit is being made again/] })
  const seen = progressOf((ready.body.reasons as string[])[0])
  t.ok(seen !== null && seen > 0, `with its progress (${seen})`)

  await stop(first.child, 'SIGKILL')

  // The same settings again (the killed instance's lease names them): it goes on after the last batch committed.
  const second = await startServer(t, changed)
  const goingOn = await second.lineMatching(/going on from ([\d,]+) of [\d,]+ events/)
  const resumed = Number(/going on from ([\d,]+)/.exec(goingOn)![1]!.replaceAll(',', ''))
  t.ok(resumed >= seen!, `went on from ${resumed}, not from 0 (${seen} were done when /ready said)`)
  await second.lineMatching(/The kept audit was made again \(from the kept facts\)/)
  t.equal((await request(`${second.url}/ready`)).status, 200, 'ready once it is made')
  const login = await request(`${second.url}/auth`, { body: { username: 'admin', password: 'admin-password' } })
  const token = String(login.body.access_token)
  const now = Date.now()
  const window = `start_time_utc=${new Date(now - 30 * 86_400_000).toISOString()}&end_time_utc=${new Date(now).toISOString()}`
  t.equal((await request(`${second.url}/v1/event-tracer/audit?${window}`, { token })).status, 200, 'and the audit is read')
})

t.test('with several workers, the primary leaves the rebuild to them: they listen first, share its batches, and each says when it is made', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password' }
  const seeded = await runCli(['seed', '--demo', '--events', '30000', '--days', '30'], env)
  t.equal(seeded.status, 0, seeded.stderr)

  const workers = await startWorkers(t, { ...env, STAGE_DEADLINES: 'data_registration=6h', TRACER_REBUILD_BATCH: '1', WORKERS: '2' })
  const ready = await request(`${workers.url}/ready`)
  t.equal(ready.status, 503, 'not ready while the audit is made again')
  t.ok((progressOf((ready.body.reasons as string[])[0]) ?? 0) > 0, 'with its progress')
  t.equal((await request(`${workers.url}/health`)).status, 200, 'live')
  // One worker commits the last batch; the other finds the audit made by then.
  await workers.lineMatching(/^The kept audit was made again \(from the kept facts\)/)
  await workers.lineMatching(/^The kept audit is made: its reads are served again\./)
  const said = workers.output.filter((line) => /^The kept audit (was made again|is made)/.test(line))
  t.equal(said.length, 2, 'each worker said once that it is made')
  t.equal((await request(`${workers.url}/ready`)).status, 200, 'ready once it is made')
  t.equal(workers.output.filter((line) => /The kept audit is being made again/.test(line)).length, 2, 'each worker began, going on from the batches done before')
})
