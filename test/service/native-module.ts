import t from 'tap'
import { CliError } from '../../src/cli-error.js'
import { loadConfig } from '../../src/config.js'
import { nativeModuleMismatch, storeFailure } from '../../src/start/start-failures.js'

/** What Node 24 throws when it loads a better-sqlite3 that npm built against Node 20's headers. */
const nodeSays = () =>
  Object.assign(
    new Error(`The module '/srv/frb-tracer/node_modules/better-sqlite3/build/Release/better_sqlite3.node'
was compiled against a different Node.js version using
NODE_MODULE_VERSION 115. This version of Node.js requires
NODE_MODULE_VERSION 137. Please try re-compiling or re-installing
the module (for instance, using \`npm rebuild\` or \`npm install\`).`),
    { code: 'ERR_DLOPEN_FAILED' }
  )

const node24 = { version: 'v24.11.1', prefix: '/opt/node-v24.11.1', hasHeaders: true }

t.test('a start on a Node the SQLite module was not built for names the cause and a rebuild that works', async (t) => {
  const failure = storeFailure(loadConfig({ TRACER_DB: 'data/tracer.sqlite' }), nodeSays(), 3)
  t.ok(failure instanceof CliError)
  const { message, exitStatus } = failure as CliError
  t.equal(exitStatus, 3)
  t.notMatch(message, /sqlite store/, 'the store is not to blame')
  t.match(message, new RegExp(`^better-sqlite3 was built for Node ABI 115 \\(Node 20\\), this is Node ${process.version} \\(ABI 137\\): run \`npm`))
  t.match(message, /npm_config_nodedir/)
  t.match(message, /npm rebuild better-sqlite3` with this Node first on PATH/)
})

t.test('the rebuild names this Node\'s headers when they came with it, and says to unset a nodedir otherwise', async (t) => {
  t.equal(
    nativeModuleMismatch(nodeSays(), node24)?.message,
    'better-sqlite3 was built for Node ABI 115 (Node 20), this is Node v24.11.1 (ABI 137): ' +
      "run `npm_config_nodedir=/opt/node-v24.11.1 npm rebuild better-sqlite3` with this Node first on PATH (npm's nodedir must point to this Node's headers, not another's)"
  )
  t.equal(
    nativeModuleMismatch(nodeSays(), { ...node24, hasHeaders: false })?.message,
    'better-sqlite3 was built for Node ABI 115 (Node 20), this is Node v24.11.1 (ABI 137): ' +
      "run `npm rebuild better-sqlite3` with this Node first on PATH, and npm_config_nodedir unset or pointing to this Node's headers (a nodedir in .npmrc builds for the Node it names)"
  )
})

t.test('other errors are not taken for a mismatch', async (t) => {
  t.equal(nativeModuleMismatch(new Error('SQLITE_CANTOPEN: unable to open database file')), undefined)
  t.equal(nativeModuleMismatch('NODE_MODULE_VERSION 115'), undefined)
})
