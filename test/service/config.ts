import { readFileSync, statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'
import { resolveJwtSecret } from '../../src/secret.js'

t.test('defaults follow CONTRACT section 8', async (t) => {
  const config = loadConfig({})
  t.match(config, {
    PORT: 8000,
    HOST: '127.0.0.1',
    TRACER_STORE: 'sqlite',
    TRACER_DB: './data/tracer.sqlite',
    MONGODB_DB: 'frb_master',
    ACCESS_TOKEN_TTL: 1800,
    TOKEN_IAT_TOLERANCE_S: 5,
    REFRESH_TOKEN_TTL: 2_592_000,
    MAX_WINDOW_DAYS: 366,
    LOG_LEVEL: 'info',
    AUTH_RATE_LIMIT: 10,
    AUTH_USER_FAILURE_LIMIT: 100,
    AUTH_USER_FAILURE_WINDOW: 3600,
    REFRESH_RATE_LIMIT: 6000,
    REQUEST_TIMEOUT_MS: 30_000,
    KEEP_ALIVE_TIMEOUT_MS: 72_000,
    BEHIND_TLS: false,
    METRICS_REQUIRE_TOKEN: false,
    MAX_STREAMED_RESPONSES: 32,
    MAX_STREAMS: 1000,
    STREAM_STALL_TIMEOUT_S: 30,
    WORKERS: 1
  })
  t.strictSame(config.TRACER_SITES.names, ['chime', 'kko', 'gbo', 'hco'])
  t.equal(config.JWT_SECRET, undefined)
  t.equal(config.AUTH_ADDRESS_RATE_LIMIT, undefined, 'AUTH_RATE_LIMIT applies')
})

t.test('values are converted, empty strings count as unset, unknown variables are ignored', async (t) => {
  const config = loadConfig({ PORT: '9001', ACCESS_TOKEN_TTL: '60', TRACER_SITES: 'chime,kko', HOST: '', PATH: '/bin' })
  t.equal(config.PORT, 9001)
  t.equal(config.ACCESS_TOKEN_TTL, 60)
  t.strictSame(config.TRACER_SITES.names, ['chime', 'kko'])
  t.equal(config.HOST, '127.0.0.1')
  const flags = loadConfig({ BEHIND_TLS: 'true', METRICS_REQUIRE_TOKEN: 'false' })
  t.equal(flags.BEHIND_TLS, true)
  t.equal(flags.METRICS_REQUIRE_TOKEN, false)
  t.strictSame(loadConfig({ TRUST_PROXY: '10.0.0.5,10.1.0.0/16,fd00::/8' }).TRUST_PROXY, ['10.0.0.5', '10.1.0.0/16', 'fd00::/8'])
  t.equal(loadConfig({ WORKERS: '3' }).WORKERS, 3)
  t.equal(loadConfig({ WORKERS: 'auto' }).WORKERS, Math.min(availableParallelism(), 64), 'auto: one per core')
})

t.test('a bad value is one line naming the variable', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'eighty' }, /^Invalid configuration: PORT .*"eighty"/],
    [{ PORT: '70000' }, /^Invalid configuration: PORT /],
    [{ ACCESS_TOKEN_TTL: '0' }, /^Invalid configuration: ACCESS_TOKEN_TTL /],
    [{ TRACER_STORE: 'postgres' }, /^Invalid configuration: TRACER_STORE /],
    [{ TRACER_SITES: 'chime,,kko' }, /^Invalid configuration: TRACER_SITES /],
    [{ TRACER_SITES: 'chime,chime' }, /^Invalid configuration: TRACER_SITES lists a site twice/],
    [{ LOG_LEVEL: 'loud' }, /^Invalid configuration: LOG_LEVEL /],
    [{ MAX_WINDOW_DAYS: '1.5' }, /^Invalid configuration: MAX_WINDOW_DAYS /],
    [{ MAX_STREAMED_RESPONSES: '0' }, /^Invalid configuration: MAX_STREAMED_RESPONSES .*"0"/],
    [{ MAX_STREAMS: '0' }, /^Invalid configuration: MAX_STREAMS .*"0"/],
    [{ STREAM_STALL_TIMEOUT_S: 'soon' }, /^Invalid configuration: STREAM_STALL_TIMEOUT_S .*"soon"/],
    [{ TRACER_STORE: 'mongodb' }, /^Invalid configuration: MONGODB_URL is required/],
    [{ MONGODB_URL: 'http://db' }, /^Invalid configuration: MONGODB_URL /],
    [{ BEHIND_TLS: 'yes' }, /^Invalid configuration: BEHIND_TLS .*"yes".*true or false/],
    [{ METRICS_REQUIRE_TOKEN: '1' }, /^Invalid configuration: METRICS_REQUIRE_TOKEN /],
    [{ REQUEST_TIMEOUT_MS: '0' }, /^Invalid configuration: REQUEST_TIMEOUT_MS /],
    [{ AUTH_ADDRESS_RATE_LIMIT: '0' }, /^Invalid configuration: AUTH_ADDRESS_RATE_LIMIT /],
    [{ AUTH_USER_FAILURE_WINDOW: '86401' }, /^Invalid configuration: AUTH_USER_FAILURE_WINDOW /],
    [{ TRUST_PROXY: 'proxy.example' }, /^Invalid configuration: TRUST_PROXY /],
    [{ TRUST_PROXY: '10.0.0.1,300.0.0.1' }, /^Invalid configuration: TRUST_PROXY holds "300\.0\.0\.1"/],
    [{ WORKERS: '0' }, /^Invalid configuration: WORKERS must be a whole number from 1 to 64, or auto .*"0"/],
    [{ WORKERS: '65' }, /^Invalid configuration: WORKERS .*"65"/],
    [{ WORKERS: '1.5' }, /^Invalid configuration: WORKERS .*"1\.5"/],
    [{ WORKERS: 'all' }, /^Invalid configuration: WORKERS .*"all"/],
    [{ WORKERS: '2', TRACER_DB: ':memory:' }, /^Invalid configuration: WORKERS must be 1 with TRACER_DB=:memory:/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /^Invalid configuration: TRUST_PROXY holds "10\.0\.0\.0\/33"/]
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message }, JSON.stringify(env))
    try {
      loadConfig(env)
    } catch (error) {
      t.notMatch((error as Error).message, /\n/, 'one line')
    }
  }
})

t.test('a short JWT_SECRET is refused without echoing it', async (t) => {
  t.throws(() => loadConfig({ JWT_SECRET: 'hunter2' }), { message: /^Invalid configuration: JWT_SECRET .*7 characters/ })
  try {
    loadConfig({ JWT_SECRET: 'hunter2' })
  } catch (error) {
    t.notMatch((error as Error).message, /hunter2/)
  }
})

t.test('without JWT_SECRET: refused in production, generated once (mode 0600) elsewhere', async (t) => {
  const folder = t.testdir()
  const TRACER_DB = join(folder, 'store', 'tracer.sqlite')
  t.throws(() => resolveJwtSecret(loadConfig({ TRACER_DB, NODE_ENV: 'production' })), ConfigError)

  const first = resolveJwtSecret(loadConfig({ TRACER_DB }))
  t.equal(first.generatedFile, join(folder, 'store', 'jwt-secret'))
  t.ok(Buffer.byteLength(first.secret) >= 32)
  t.equal(statSync(first.generatedFile!).mode & 0o777, 0o600)
  t.equal(readFileSync(first.generatedFile!, 'utf8'), first.secret)
  t.equal(resolveJwtSecret(loadConfig({ TRACER_DB })).secret, first.secret, 'the next start reuses it')

  const configured = resolveJwtSecret(loadConfig({ TRACER_DB, JWT_SECRET: 'k'.repeat(32), NODE_ENV: 'production' }))
  t.strictSame(configured, { secret: 'k'.repeat(32) })
})
