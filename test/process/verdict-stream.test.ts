import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { get, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { end, spawnOwned } from '../owned-processes.js'
import { SseClient } from '../sse.js'
import { request, runCli, startServer } from './processes.js'

/** What the issue asks: an event whose deadline passes is on the stream as stuck within 2 s of the deadline. */
const WITHIN_MS = 2000
const DEADLINE_S = 3
const ENV = { STAGE_DEADLINES: `baseband_callback_request=${DEADLINE_S}s` }

/** The service on SQLite: `tracer serve`, with a writer added before its first start (so no demo data). */
async function sqliteServer(t: Test): Promise<string> {
  const env = { ...ENV, TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const added = await runCli(['users', 'add', 'pipeline', '--role', 'writer', '--password-stdin'], env, 'pipeline-password\n')
  t.equal(added.status, 0, added.stderr)
  return (await startServer(t, env)).url
}

/** The service on MongoDB: the in-process engine, in a server process of its own (engine-server.ts). */
async function engineServer(t: Test): Promise<string> {
  const child = spawnOwned(process.execPath, ['dist/test/process/engine-server.js'], {
    // `tracer serve` makes and keeps a secret in its store's folder; this store has no folder.
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', PORT: '0', JWT_SECRET: randomBytes(32).toString('hex'), ...ENV },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => end(child))
  for await (const line of createInterface({ input: child.stdout! })) {
    const url = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(line)?.[1]
    if (url !== undefined) return url
  }
  throw new Error('the engine server ended before it listened')
}

for (const [store, start] of [
  ['SQLite', sqliteServer],
  ['MongoDB (the in-process engine)', engineServer]
] as const) {
  t.test(`${store}: an event whose deadline passes, with no write, is on the live stream as stuck within 2 s of the deadline`, async (t) => {
    const url = await start(t)
    const login = await request(`${url}/auth`, { body: { username: 'pipeline', password: 'pipeline-password' } })
    const token = login.body.access_token as string
    const opening = get(`${url}/v1/event-tracer/stream?verdicts=true&event_no=4242`, { headers: { authorization: token }, agent: false })
    t.teardown(() => opening.destroy())
    const [response] = (await once(opening, 'response')) as [IncomingMessage]
    t.equal(response.statusCode, 200)
    const client = new SseClient(response)
    await client.until(() => client.comments.length > 0, 'the stream is open')

    const eventTime = Date.now()
    const posted = await request(`${url}/v1/events`, {
      token,
      body: [{ event_no: 4242, timestamp_utc: new Date(eventTime).toISOString(), snr: 25, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } }]
    })
    t.equal(posted.status, 200, JSON.stringify(posted.body))
    await client.until(() => client.verdicts.some((change) => change.to === 'stuck'), 'event 4242 is stuck', 15_000)

    const deadline = eventTime + DEADLINE_S * 1000
    const stuck = client.messages.find((message) => message.event === 'verdict' && message.data.includes('"to":"stuck"'))!
    t.match(JSON.parse(stuck.data), {
      event_no: 4242,
      from: 'in_progress',
      to: 'stuck',
      became_stuck: [{ site: 'chime', stage: 'baseband_callback_request', deadline_utc: new Date(deadline).toISOString() }]
    })
    t.strictSame(client.verdicts[0] && [client.verdicts[0].from, client.verdicts[0].to], [null, 'in_progress'], 'the event entered the audit first, with its write')
    t.ok(stuck.arrivedAt >= deadline, 'not before the deadline')
    t.ok(stuck.arrivedAt - deadline < WITHIN_MS, `on the stream ${stuck.arrivedAt - deadline} ms after the deadline`)
  })
}
