import { randomUUID } from 'node:crypto'
import { MongoClient, type Db } from 'mongodb'
import type { Test } from 'tap'
import { loadConfig } from '../../src/config.js'
import { openMongoStore } from '../../src/store/mongodb/connect.js'
import { MongoStore } from '../../src/store/mongodb/store.js'
import type { Store } from '../../src/store/port.js'
import type { Sites } from '../../src/vocabulary.js'
import { defaultSites } from '../sites.js'
import { MingoEngine } from './mingo/engine.js'

/** A fresh, empty MongoDB store and a raw handle on the same database, to write as other programs do. */
export interface MongoUnderTest {
  store: Store
  db: Db
  /** Only on the in-process engine: its switches and call log. */
  engine?: MingoEngine
}

export interface MongoBackend {
  name: string
  open(t: Test, sites?: Sites): Promise<MongoUnderTest>
}

const engineBackend: MongoBackend = {
  name: 'the in-process mingo engine',
  async open(t, sites = defaultSites) {
    const engine = new MingoEngine()
    const store = await MongoStore.open(engine.db, () => engine.close(), sites)
    t.teardown(() => store.close())
    return { store, db: engine.db, engine }
  }
}

/** A real server: a database of its own per test, dropped when the test ends. */
const serverBackend = (url: string): MongoBackend => ({
  name: 'the MongoDB server at MONGODB_URL',
  async open(t, sites = defaultSites) {
    const dbName = `frb_tracer_test_${randomUUID().slice(0, 8)}`
    const store = await openMongoStore({ url, dbName, sites }, { log: (message) => t.comment(message) })
    const client = await new MongoClient(url).connect()
    t.teardown(async () => {
      await store.close()
      await client.db(dbName).dropDatabase()
      await client.close()
    })
    return { store, db: client.db(dbName) }
  }
})

/** The engine always; a real server too when MONGODB_URL is set (validated as the service does). */
export function mongoBackends(): MongoBackend[] {
  const { MONGODB_URL } = loadConfig({ MONGODB_URL: process.env.MONGODB_URL })
  return MONGODB_URL === undefined ? [engineBackend] : [engineBackend, serverBackend(MONGODB_URL)]
}

export const engineOnly = engineBackend
