import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import t, { type Test } from 'tap'
import { TEST_SECRET } from '../helper.js'
import { closedPort, runCli, startServer, stop } from './processes.js'

/** Issue 13: a server holds only the modules serving needs, so its memory is not spent on the rest. */

const LOGGER = resolve('dist/test/process/module-log.js')

/** Starts `tracer serve` with `env`, listing in `dir` every module it loads; resolves to those loaded once it listens. */
async function modulesOfServe(t: Test, dir: string, env: Record<string, string>): Promise<string[]> {
  if (!existsSync(LOGGER)) throw new Error(`${LOGGER} is missing: run the tests with npm test, which builds first`)
  const log = join(dir, 'modules.log')
  const server = await startServer(t, { ...env, JWT_SECRET: TEST_SECRET, MODULE_LOG: log, NODE_OPTIONS: `--import=${pathToFileURL(LOGGER).href}` })
  const loaded = readFileSync(log, 'utf8').split('\n')
  await stop(server.child)
  return loaded
}

function notLoaded(t: Test, loaded: string[], unwanted: Record<string, RegExp>) {
  for (const [what, pattern] of Object.entries(unwanted)) {
    t.strictSame(loaded.filter((url) => pattern.test(url)), [], `not ${what}`)
  }
}

t.test('serve on a SQLite store in use loads no module of the other commands, the demo or MongoDB', async (t) => {
  const dir = t.testdir()
  const db = join(dir, 'tracer.sqlite')
  // A store with a user is one in use: the server seeds no demo data on it.
  const added = await runCli(['users', 'add', 'someone', '--password-stdin'], { TRACER_DB: db }, 'a password\n')
  t.equal(added.status, 0, added.stderr)

  const loaded = await modulesOfServe(t, dir, { TRACER_DB: db })
  t.ok(loaded.some((url) => url.includes('/node_modules/fastify/')), 'the list has what serving loads')
  t.ok(loaded.some((url) => url.includes('/node_modules/better-sqlite3/')), 'the SQLite driver among it')
  notLoaded(t, loaded, {
    'the progress bar of seed and import': /\/node_modules\/cli-progress\//,
    'the demo generator': /\/dist\/src\/demo\//,
    'the import command’s record parser': /\/dist\/src\/cli\/ndjson-records\.js$/,
    'the MongoDB driver or adapter': /\/node_modules\/mongodb\/|\/dist\/src\/store\/mongodb\//
  })
})

t.test('serve on MongoDB loads no SQLite adapter', async (t) => {
  // Nothing answers: the server listens all the same, which is all this needs.
  const loaded = await modulesOfServe(t, t.testdir(), { TRACER_STORE: 'mongodb', MONGODB_URL: `mongodb://127.0.0.1:${await closedPort()}/` })
  t.ok(loaded.some((url) => url.includes('/node_modules/mongodb/')), 'the list has the MongoDB driver')
  notLoaded(t, loaded, { 'the SQLite driver or adapter': /\/node_modules\/better-sqlite3\/|\/dist\/src\/store\/sqlite\// })
})
