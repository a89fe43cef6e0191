import { MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError } from 'mongodb'
import t from 'tap'
import { defaultSites } from '../sites.js'
import { buildApp } from '../../src/app.js'
import { ensureAdminUser } from '../../src/bootstrap.js'
import { connectInBackground } from '../../src/store/mongodb/background.js'
import type { MongoConnection } from '../../src/store/mongodb/connect.js'
import { StoreUnavailableError } from '../../src/store/port.js'
import { claims, signJwt, testConfig } from '../helper.js'
import { MingoEngine } from './mingo/engine.js'

const UNAVAILABLE = { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' }
const settings = { url: 'mongodb://db.example:27017', dbName: 'frb_master', sites: defaultSites }
const unreachable = () => new MongoServerSelectionError('connect ECONNREFUSED 10.0.0.5:27017', {} as never)
const engineConnection = (engine: MingoEngine): MongoConnection => ({ db: () => engine.db, close: () => engine.close() })

/** A clock that only waits moves, and waits that end when the test says so. */
function heldTime() {
  const time = { now: 0, sleeps: [] as number[], logs: [] as string[] }
  let wake = () => {}
  let onLog = () => {}
  const tools = {
    now: () => time.now,
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        time.sleeps.push(ms)
        wake = () => ((time.now += ms), resolve())
      }),
    log: (message: string) => (time.logs.push(message), onLog())
  }
  /** Resolves once the next retry is announced: the attempt failed and the wait began. */
  const nextRetry = () => new Promise<void>((resolve) => (onLog = resolve))
  return { time, tools, wake: () => wake(), nextRetry }
}

t.test('a server started while MongoDB does not answer: 503 and /health 200, then serving once it answers, without a restart', async (t) => {
  const engine = new MingoEngine()
  let databaseUp = false
  const connect = async () => {
    if (!databaseUp) throw unreachable()
    return engineConnection(engine)
  }
  const { time, tools, wake, nextRetry } = heldTime()
  const config = testConfig(t, { TRACER_STORE: 'mongodb', MONGODB_URL: settings.url, TRACER_ADMIN_PASSWORD: 'admin-password' })
  const prepare = async (store: Parameters<typeof ensureAdminUser>[0]) => void (await ensureAdminUser(store, config, () => {}))
  const retried = nextRetry()
  const { store, connected } = connectInBackground(settings, { ...tools, connect, prepare })
  const app = await buildApp({ config, store })
  t.teardown(() => app.close())
  const token = signJwt(claims('operator'))
  const get = (url: string) => app.inject({ url, headers: { authorization: token } })
  const login = () => app.inject({ method: 'POST', url: '/auth', payload: { username: 'admin', password: 'admin-password' } })

  await retried
  t.match(time.logs, [/^MongoDB is unreachable \(attempt 1, MongoServerSelectionError: .*\); retrying in 500 ms$/])
  t.strictSame((await get('/health')).json(), { status: 'ok' })
  for (const response of [await get('/ready'), await get('/v1/events'), await login()]) {
    t.equal(response.statusCode, 503)
    t.strictSame(response.json(), UNAVAILABLE)
  }
  t.strictSame((await get('/auth/verify')).json(), { valid: true }, 'a route that needs no store works')

  databaseUp = true
  wake()
  await connected
  t.strictSame((await get('/ready')).json(), { status: 'ok' })
  t.strictSame((await get('/v1/events')).json(), { events: [], next_cursor: null })
  t.equal((await login()).statusCode, 200, 'the admin user was created once the database answered')
  await engine.collection('trace').insertOne({ event_no: 1 })
  await t.rejects(engine.collection('trace').insertOne({ event_no: 1 }), { code: 11000 }, 'and the indexes')
})

t.test("a server's store never gives up: the delay doubles up to 8 s, then stays there", async (t) => {
  let attempts = 0
  const engine = new MingoEngine()
  const { time, tools, wake } = heldTime()
  const connect = async () => {
    if (++attempts <= 12) {
      setImmediate(wake)
      throw unreachable()
    }
    return engineConnection(engine)
  }
  const { store, connected } = connectInBackground(settings, { ...tools, connect })
  t.teardown(() => store.close())
  await connected
  t.strictSame(time.sleeps, [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000, 8000, 8000])
  t.ok(time.now > 60_000, 'well past the minute a command waits')
  t.equal(time.logs.length, 12)
  await t.resolves(store.ping())
})

t.test('the start-up work is retried too when the database goes away just after the connection', async (t) => {
  const engine = new MingoEngine()
  const { time, tools, wake } = heldTime()
  let prepared = 0
  const prepare = async (store: Parameters<typeof ensureAdminUser>[0]) => {
    prepared++
    if (prepared === 1) {
      engine.failNext('countDocuments', new MongoNetworkError('connection reset'))
      setImmediate(wake)
    }
    await store.users.count()
  }
  const { store, connected } = connectInBackground(settings, { ...tools, connect: async () => engineConnection(engine), prepare })
  t.teardown(() => store.close())
  await connected
  t.equal(prepared, 2)
  t.strictSame(time.sleeps, [500])
})

t.test('errors that waiting cannot fix reject `connected` at once', async (t) => {
  const denied = new MongoServerError({ message: 'Authentication failed.', code: 18, codeName: 'AuthenticationFailed' })
  const { time, tools } = heldTime()
  const refused = connectInBackground(settings, {
    ...tools,
    connect: async () => {
      throw denied
    }
  })
  await t.rejects(refused.connected, denied)
  await t.rejects(refused.store.ping(), StoreUnavailableError, 'the store never serves')

  const engine = new MingoEngine()
  await engine.collection('trace').insertOne({ event_no: 7 })
  await engine.collection('trace').insertOne({ event_no: 7 })
  const duplicated = connectInBackground(settings, { ...tools, connect: async () => engineConnection(engine) })
  await t.rejects(duplicated.connected, { message: /^Cannot create the indexes of the MongoDB collection trace: E11000 duplicate key/ })
  t.strictSame(time.sleeps, [])
})

t.test('closing the store while it connects ends the attempt under way, and any wait, at once', async (t) => {
  let attempts = 0
  const hanging = (_url: string, _options: unknown, signal?: AbortSignal) =>
    new Promise<MongoConnection>((_resolve, reject) => {
      attempts++
      // What closing a MongoClient does to its pending connect().
      signal!.addEventListener('abort', () => reject(new MongoTopologyClosedError()))
    })
  const log = (message: string) => t.fail(`no retry after the close: ${message}`)
  const duringAttempt = connectInBackground(settings, { log, connect: hanging })
  await duringAttempt.store.close()
  await duringAttempt.connected
  t.equal(attempts, 1)
  await t.rejects(duringAttempt.store.ping(), { message: 'MongoDB store is closed' })

  // A real wait of a day, which only the close can end.
  const logs: string[] = []
  const duringWait = connectInBackground(settings, {
    log: (message) => logs.push(message),
    backoff: { firstDelayMs: 86_400_000, maxDelayMs: 86_400_000 },
    connect: async () => {
      setImmediate(() => void duringWait.store.close())
      throw unreachable()
    }
  })
  await duringWait.connected
  t.equal(logs.length, 1, 'it was waiting')
})
