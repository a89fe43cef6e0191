/**
 * The service on MongoDB in a process of its own, for process tests: no MongoDB server can run
 * here, so the database is the in-process engine the store tests use (test/store/mingo), living in
 * this process. The app, the store adapter and its change-stream watcher are the production ones,
 * opened as a server opens them. The environment configures it as it does `tracer serve` (PORT
 * 0 picks a free port); a writer `pipeline` (password `pipeline-password`) exists from the start.
 * Prints Fastify's "Server listening at" line, and ends on SIGTERM.
 */
import { buildApp } from '../../src/app.js'
import { hashPassword } from '../../src/auth/passwords.js'
import { loadConfig } from '../../src/config.js'
import { MongoStore } from '../../src/store/mongodb/store.js'
import { MingoEngine } from '../store/mingo/engine.js'

const config = loadConfig(process.env)
const engine = new MingoEngine()
const store = await MongoStore.open(engine.db, () => engine.close(), config.TRACER_SITES, 'create', { deadlines: config.STAGE_DEADLINES, watch: true })
await store.users.create({ name: 'pipeline', password_hash: await hashPassword('pipeline-password'), role: 'writer', created_at: Date.now() })
const app = await buildApp({ config, store })
await app.listen({ host: '127.0.0.1', port: config.PORT })
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
