import { MongoClient, MongoServerError, MongoServerSelectionError } from 'mongodb'
import t from 'tap'
import { defaultSites } from '../sites.js'
import { clientOptions, openMongoStore, SERVER_SELECTION_TIMEOUT_MS, SOCKET_TIMEOUT_MS, type MongoConnection } from '../../src/store/mongodb/connect.js'
import { StoreUnavailableError } from '../../src/store/port.js'
import { MingoEngine } from './mingo/engine.js'

const unreachable = () => new MongoServerSelectionError('connect ECONNREFUSED 10.0.0.5:27017', {} as never)

/** A fake clock: `sleep` only moves it, and an attempt that fails costs a server selection timeout. */
function fakeTime() {
  const time = { now: 0, sleeps: [] as number[], logs: [] as string[] }
  const tools = {
    now: () => time.now,
    sleep: async (ms: number) => {
      time.sleeps.push(ms)
      time.now += ms
    },
    log: (message: string) => void time.logs.push(message)
  }
  return { time, tools }
}

/** A connection over the engine, remembering whether it was closed. */
const engineConnection = (engine: MingoEngine) => {
  const connection = { closed: false, db: () => engine.db, close: async () => void (connection.closed = true) }
  return connection satisfies MongoConnection
}

const settings = { url: 'mongodb://db.example:27017', dbName: 'frb_master', sites: defaultSites }

t.test('a command waits for the database with exponential backoff and logs each retry', async (t) => {
  const { time, tools } = fakeTime()
  const engine = new MingoEngine()
  let attempts = 0
  const connect = async () => {
    attempts++
    if (attempts <= 3) {
      time.now += SERVER_SELECTION_TIMEOUT_MS
      throw unreachable()
    }
    return engineConnection(engine)
  }
  const store = await openMongoStore(settings, { ...tools, connect })
  t.teardown(() => store.close())
  t.equal(attempts, 4)
  t.strictSame(time.sleeps, [500, 1000, 2000])
  t.equal(time.logs.length, 3)
  t.match(time.logs[0], /^MongoDB is unreachable \(attempt 1, MongoServerSelectionError: connect ECONNREFUSED .*\); retrying in 500 ms$/)
  await t.resolves(store.ping())
})

t.test('a command gives up after a minute with StoreUnavailableError (a server never does); the delay is capped', async (t) => {
  const { time, tools } = fakeTime()
  const connect = async (): Promise<MongoConnection> => {
    time.now += SERVER_SELECTION_TIMEOUT_MS
    throw unreachable()
  }
  await t.rejects(openMongoStore(settings, { ...tools, connect }), StoreUnavailableError)
  t.strictSame(time.sleeps, [500, 1000, 2000, 4000, 8000, 8000], 'doubling up to 8 s; the next wait would pass 60 s')
  t.ok(time.now <= 60_000)
})

t.test('an error that waiting cannot fix fails start-up at once', async (t) => {
  const { time, tools } = fakeTime()
  const denied = new MongoServerError({ message: 'Authentication failed.', code: 18, codeName: 'AuthenticationFailed' })
  const connect = async (): Promise<MongoConnection> => {
    throw denied
  }
  await t.rejects(openMongoStore(settings, { ...tools, connect }), denied)
  t.strictSame(time.sleeps, [])
})

t.test('index creation is retried too, on a fresh connection; the failed one is closed', async (t) => {
  const { tools } = fakeTime()
  const engine = new MingoEngine()
  engine.away = true
  const connections: ReturnType<typeof engineConnection>[] = []
  const connect = async () => {
    const connection = engineConnection(engine)
    connections.push(connection)
    return connection
  }
  const sleep = async (ms: number) => {
    await tools.sleep(ms)
    engine.away = false
  }
  const store = await openMongoStore(settings, { ...tools, sleep, connect })
  t.teardown(() => store.close())
  t.strictSame(connections.map((connection) => connection.closed), [true, false])
  await engine.collection('trace').insertOne({ event_no: 1 })
  await t.rejects(engine.collection('trace').insertOne({ event_no: 1 }), { code: 11000 }, 'the indexes exist')
})

t.test('pipeline data that breaks a unique index fails start-up at once, naming the collection', async (t) => {
  const { time, tools } = fakeTime()
  const engine = new MingoEngine()
  await engine.collection('trace').insertOne({ event_no: 7 })
  await engine.collection('trace').insertOne({ event_no: 7 })
  const connection = engineConnection(engine)
  await t.rejects(openMongoStore(settings, { ...tools, connect: async () => connection }), {
    message: /^Cannot create the indexes of the MongoDB collection trace: E11000 duplicate key/
  })
  t.strictSame(time.sleeps, [])
  t.equal(connection.closed, true)
})

t.test('client options: bounded timeouts; majority and journaled writes unless the connection string says otherwise', async (t) => {
  const options = clientOptions(settings.url)
  t.equal(options.serverSelectionTimeoutMS, SERVER_SELECTION_TIMEOUT_MS)
  t.equal(options.socketTimeoutMS, SOCKET_TIMEOUT_MS)
  const writeConcern = (url: string) => new MongoClient(url, clientOptions(url)).options.writeConcern
  t.match(writeConcern('mongodb://a:1,b:2/?replicaSet=rs'), { w: 'majority', journal: true })
  t.match(writeConcern('mongodb://a:1,b:2/?replicaSet=rs&w=2'), { w: 2, journal: true })
  t.match(writeConcern('mongodb://a:1/?journal=false'), { w: 'majority', journal: false })
})
