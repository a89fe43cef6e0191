import Fastify, { type FastifyInstance } from 'fastify'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { builtDashboard } from '../../plugins/dashboard.js'
import { appPlugin, serverOptions } from '../../src/app.js'
import { DEMO } from '../../src/bootstrap.js'
import { loadConfig, type Config } from '../../src/config.js'
import { seedDemo } from '../../src/demo/generate.js'
import { openStore } from '../../src/store/open.js'
import { addUser, login, TEST_SECRET } from '../helper.js'

export const OPERATOR = { username: 'admin', password: 'dashboard-admin-password' }

export interface DashboardServer {
  app: FastifyInstance
  config: Config
  url: string
  /** An access token of role writer, for the pipeline's writes in tests. */
  writerToken: string
  /** How far ahead of the real time the app's clock is (0 unless a test moves it): what its deadline check reads. */
  clock: { aheadMs: number }
  close(): Promise<void>
}

/**
 * The service stops answering, as when its process stops: the listener closes and every open
 * connection (the live streams too) is cut. The app and its store stay, for `listenAgain`.
 */
export async function stopListening(server: DashboardServer): Promise<void> {
  const closed = new Promise<void>((resolve, reject) => server.app.server.close((error) => (error === undefined ? resolve() : reject(error))))
  server.app.server.closeAllConnections()
  await closed
}

/** The service answers again, on the address it had. */
export async function listenAgain(server: DashboardServer): Promise<void> {
  const { port } = new URL(server.url)
  await new Promise<void>((resolve, reject) => {
    server.app.server.once('error', reject)
    server.app.server.listen(Number(port), '127.0.0.1', () => {
      server.app.server.off('error', reject)
      resolve()
    })
  })
}

/**
 * The service listening on a free port of 127.0.0.1, on a new SQLite store in `dir` seeded with
 * the demo data set of a first start (events up to `now`), with `admin` and a writer `pipeline`.
 */
export async function startDashboardServer(dir: string, now: number): Promise<DashboardServer> {
  if (!existsSync(join(builtDashboard(), 'index.html'))) {
    throw new Error('The dashboard is not built: run `node dashboard/build.mjs` (npm test and npm run build do).')
  }
  // Many logins as admin from one address in a minute: more than the login limit allows an attacker.
  const config = loadConfig({ TRACER_DB: join(dir, 'tracer.sqlite'), JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'silent', AUTH_RATE_LIMIT: '1000' })
  const store = await openStore(config)
  await seedDemo(store, config.TRACER_SITES, { ...DEMO, now })
  const app = Fastify(serverOptions(config))
  const clock = { aheadMs: 0 }
  await app.register(appPlugin, { config, store, now: () => Date.now() + clock.aheadMs })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address')
  await addUser(app, OPERATOR.username, OPERATOR.password, 'admin')
  await addUser(app, 'pipeline', 'pipeline-password', 'writer')
  const { access_token } = await login(app, 'pipeline', 'pipeline-password')
  return { app, config, url: `http://127.0.0.1:${address.port}`, writerToken: access_token, clock, close: () => app.close() }
}

export interface TraceUpdate {
  event: number
  site: string
  stage: string
  status: string
}

/** A write of the pipeline through the real API: POST update-trace with the writer's token. */
export async function updateTrace(server: DashboardServer, body: TraceUpdate) {
  const response = await fetch(`${server.url}/v1/event-tracer/update-trace`, {
    method: 'POST',
    headers: { authorization: server.writerToken, 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  if (response.status !== 200) throw new Error(`update-trace answered ${response.status}: ${await response.text()}`)
}

/** The same write while the service listens to nobody (see stopListening): a write the page missed. */
export async function updateTraceUnheard(server: DashboardServer, body: TraceUpdate) {
  const response = await server.app.inject({
    method: 'POST',
    url: '/v1/event-tracer/update-trace',
    headers: { authorization: server.writerToken },
    payload: body
  })
  if (response.statusCode !== 200) throw new Error(`update-trace answered ${response.statusCode}: ${response.body}`)
}
