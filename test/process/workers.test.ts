import { once } from 'node:events'
import { renameSync, writeFileSync } from 'node:fs'
import { get } from 'node:http'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { DRAIN_BOUND_MS } from '../../src/cluster/primary.js'
import { TEST_SECRET } from '../helper.js'
import { isRunning, logLines, request, runCli, startWorkers, waitFor, workerEvents, type WorkerEvent, type WorkersProcess } from './processes.js'
import { halfSentWrite, refusedConnection, type HalfSentWrite } from '../raw-http.js'

/** GET /health on a connection of its own, as a new client would: the status, or the error's code. */
const healthOnNewConnection = (url: string) =>
  new Promise<number | string>((resolve) => {
    const sent = get(`${url}/health`, { agent: false, timeout: 5000 }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    })
    sent.on('timeout', () => sent.destroy(Object.assign(new Error('no answer within 5 s'), { code: 'TIMEOUT' })))
    sent.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })

/** The writes the workers have logged receiving so far. */
const receivedWrites = (server: WorkersProcess) =>
  logLines(server).filter((line) => line.msg === 'incoming request' && (line.req as { url?: string } | undefined)?.url === '/v1/events')

/** The time of each request a process logged receiving, from its own log lines. */
const requestTimes = (server: WorkersProcess, pid: number) =>
  logLines(server)
    .filter((line) => line.pid === pid && line.msg === 'incoming request')
    .map((line) => line.time as number)

t.test('WORKERS=2: a worker killed with SIGKILL is replaced, and the service answers throughout', async (t) => {
  // Requests are logged at debug: the test reads when each worker received one.
  const server = await startWorkers(t, { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), WORKERS: '2', LOG_LEVEL: 'debug' })
  const [victim, survivor] = server.pids as [number, number]
  t.equal(new Set(server.pids).size, 2, 'two worker processes')

  // The first start's work is done once, by the primary, before the workers start.
  const announced = (prefix: string) => server.output.filter((line) => line.startsWith(prefix)).length
  t.equal(announced('Created user "admin"'), 1, 'admin is created once')
  t.equal(announced('Seeded a demo data set'), 1, 'the demo is seeded once')
  const password = /with password (\S+)$/.exec(server.output.find((line) => line.startsWith('Created user')) ?? '')![1]
  const login = await request(`${server.url}/auth`, { body: { username: 'admin', password } })
  t.equal(login.status, 200, 'the printed password logs in')

  // Every poll is a new connection, which the kernel gives to a worker waiting to accept one.
  const answers: (number | string)[] = []
  const poll = async () => void answers.push(await healthOnNewConnection(server.url))
  for (let i = 0; i < 5; i++) await poll()
  process.kill(victim, 'SIGKILL')
  const replacement = () => workerEvents(server).find((event) => event.msg === 'worker listening' && event.workerPid !== victim && event.worker === 1)
  const deadline = Date.now() + 30_000
  while (replacement() === undefined) {
    if (Date.now() > deadline) throw new Error('no new worker listened within 30 s')
    await poll()
    await sleep(20)
  }
  for (let i = 0; i < 5; i++) await poll()
  t.strictSame(answers.filter((answer) => answer !== 200), [], `all ${answers.length} polls answered 200`)

  const exit = workerEvents(server).find((event) => event.workerPid === victim && event.msg !== 'worker listening')
  t.match(exit, { worker: 1, signal: 'SIGKILL', restartInMs: 0 }, 'the primary logged the kill and restarted at once')
  const { workerPid: newPid, time: listenedAt } = replacement()!
  t.ok(isRunning(newPid), `the new worker (pid ${newPid}) runs`)
  const meanwhile = requestTimes(server, survivor).filter((time) => time >= exit!.time && time < listenedAt)
  t.ok(meanwhile.length > 0, `the other worker answered ${meanwhile.length} polls while worker 1 was away`)
})

const cores = Math.min(availableParallelism(), 64)
t.test('WORKERS=auto starts one worker per core', { skip: cores < 2 && 'one core: auto is a single process' }, async (t) => {
  const server = await startWorkers(t, { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), WORKERS: 'auto', TRACER_ADMIN_PASSWORD: 'pw' })
  t.equal(server.pids.length, cores)
  t.equal(new Set(server.pids).size, cores, 'each its own process')
})

t.test('SIGTERM to the primary: requests in flight on both workers finish, then every process exits with status 0', async (t) => {
  const server = await startWorkers(t, { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), WORKERS: '2', TRACER_ADMIN_PASSWORD: 'pw', LOG_LEVEL: 'debug' })
  const token = (await request(`${server.url}/auth`, { body: { username: 'admin', password: 'pw' } })).body.access_token as string
  const port = Number(new URL(server.url).port)

  // Writes held before their bodies, until each worker holds at least five (the kernel picks the
  // worker that accepts a connection). Their bodies end with the client's half-close, which Node's
  // server answered by ending the connection: with a few writes a worker lost one now and then,
  // with ten or more nearly every run (app.ts, httpAllowHalfOpen).
  const writes: HalfSentWrite[] = []
  const eachHolds = (count: number) => {
    const held = new Map<unknown, number>()
    for (const line of receivedWrites(server)) held.set(line.pid, (held.get(line.pid) ?? 0) + 1)
    return held.size === 2 && [...held.values()].every((writes) => writes >= count)
  }
  while (!eachHolds(5) && writes.length < 80) {
    writes.push(await halfSentWrite(port, token, writes.length + 1))
    await waitFor(async () => receivedWrites(server).length === writes.length, 5000)
  }
  t.ok(eachHolds(5), `both workers hold five writes in flight or more (${writes.length} writes)`)

  const exited = once(server.child, 'exit') as Promise<[number | null, string | null]>
  const started = Date.now()
  server.child.kill('SIGTERM')
  await server.lineMatching(/"signal":"SIGTERM","msg":"closing"/)
  t.equal(await refusedConnection(port), 'ECONNREFUSED', 'once the workers close their listeners, new connections are refused')

  const answers = await Promise.all(writes.map((write) => write.finish()))
  const answered = answers.filter((answer) => /\r\n\r\nHTTP\/1\.1 200 [^]*\{"upserted":1\}$/.test(answer))
  t.strictSame(
    answers.filter((answer) => !answered.includes(answer)).map((answer) => answer.slice(answer.indexOf('\r\n\r\nHTTP/1.1') + 4)),
    [],
    `every write in flight was answered 200 (${answered.length} of ${writes.length})`
  )
  const [code] = await exited
  if (answered.length !== writes.length) t.comment(logLines(server).filter((line) => (line.level as number) >= 30 || /response|request|clos|drain/.test(String(line.msg))).map((line) => JSON.stringify(line)).join('\n'))
  t.equal(code, 0, 'the primary exits with status 0')
  t.ok(Date.now() - started < DRAIN_BOUND_MS, `within ${DRAIN_BOUND_MS} ms`)
  t.strictSame(server.pids.filter(isRunning), [], 'no worker is left behind')
  const exits = workerEvents(server).filter((event) => event.msg === 'worker exited')
  t.strictSame(exits.map((event) => event.code).sort(), [0, 0], 'each worker closed cleanly')
})

t.test('a worker that keeps failing at start is restarted after growing delays while the other serves', async (t) => {
  const folder = t.testdir()
  const db = join(folder, 'tracer.sqlite')
  const server = await startWorkers(t, { TRACER_DB: db, WORKERS: '2', TRACER_ADMIN_PASSWORD: 'pw', LOG_LEVEL: 'debug' })
  // The running workers keep the file they opened; a new one finds something that is not a database.
  writeFileSync(join(folder, 'garbage'), 'not a database\n'.repeat(100))
  renameSync(join(folder, 'garbage'), db)
  process.kill(server.pids[1]!, 'SIGKILL')

  const restarts = () => workerEvents(server).filter((event) => event.msg === 'worker exited unexpectedly; restarting it')
  await waitFor(async () => restarts().length >= 3, 40_000)
  const [killed, ...failed] = restarts().slice(0, 3) as [WorkerEvent, ...WorkerEvent[]]
  t.match(killed, { worker: 2, signal: 'SIGKILL', restartInMs: 0 }, 'the killed worker is restarted at once')
  t.match(failed, [{ worker: 2, code: 1, restartInMs: 1000 }, { worker: 2, code: 1, restartInMs: 2000 }], 'its failing successors ever later')
  const waited = failed.map((event, i) => event.time - (i === 0 ? killed : failed[i - 1]!).time)
  t.ok(waited[1]! >= 1000, `the second failure came ${waited[1]} ms after the first: the restart waited 1 s`)
  t.same(await request(`${server.url}/health`), { status: 200, body: { status: 'ok' } }, 'worker 1 serves on')
  t.ok(isRunning(server.pids[0]!), 'it was never replaced')
})

t.test('a worker that cannot use the store stops the service instead of being restarted', async (t) => {
  // PORT 0: a start binds its address before it opens the store, and 8000 may be taken on a test machine.
  const result = await runCli(['serve'], {
    PORT: '0',
    WORKERS: '2',
    TRACER_STORE: 'mongodb',
    MONGODB_URL: 'mongodb://127.0.0.1:27017/?tls=maybe',
    JWT_SECRET: TEST_SECRET
  })
  t.equal(result.status, 1)
  t.match(result.stderr, /^tracer: cannot use the mongodb store: tls\/ssl must be either "true" or "false"\n/)
  t.match(result.stdout, /"level":60,.*"code":78,.*"msg":"worker exited: it cannot use the store, so the service stops"/)
  t.notMatch(result.stdout, /restarting it/, 'no worker was restarted')
})

t.test('a bad WORKERS stops start-up with one line naming it', async (t) => {
  const result = await runCli(['serve'], { WORKERS: 'many', TRACER_DB: join(t.testdir(), 'tracer.sqlite') })
  t.equal(result.status, 1)
  t.equal(result.stderr, 'tracer: Invalid configuration: WORKERS must be a whole number from 1 to 64, or auto for one per core (got "many")\n')
})
