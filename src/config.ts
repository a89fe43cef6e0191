import { Type, type StaticDecode, type TSchema } from '@sinclair/typebox'
import { TransformDecodeError, Value } from '@sinclair/typebox/value'
import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { DEFAULT_STAGE_DEADLINES, formatStageDeadlines, parseStageDeadlines } from './domain/stage-deadlines.js'
import { siteModel } from './vocabulary.js'

/** The configured sites as the site model every part of the service is given, made once here. */
const siteList = Type.Transform(
  Type.String({
    default: 'chime,kko,gbo,hco',
    pattern: '^[a-z][a-z0-9_]{0,31}(,[a-z][a-z0-9_]{0,31}){0,63}$',
    description: 'Comma-separated site identifiers; the first is the primary site.'
  })
)
  .Decode((value) => siteModel(value.split(',')))
  .Encode((sites) => sites.names.join(','))

/** A comma-separated list, each item matching `item` (a regular expression source). */
function commaList(item: string, description: string) {
  return Type.Transform(Type.String({ pattern: `^${item}(,${item})*$`, description }))
    .Decode((value) => value.split(','))
    .Encode((items) => items.join(','))
}

/** A yes-or-no variable, written `true` or `false`. */
function flag(description: string) {
  return Type.Transform(Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false', description }))
    .Decode((value) => value === 'true')
    .Encode((value) => (value ? 'true' : 'false'))
}

/** The most server processes WORKERS may ask for: beyond the cores of any machine this runs on. */
export const MAX_WORKERS = 64

/** WORKERS: a whole number of server processes, or `auto` for one per core of this machine. */
function workerCount(value: string): number {
  if (value === 'auto') return Math.min(availableParallelism(), MAX_WORKERS)
  const count = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN
  if (count >= 1 && count <= MAX_WORKERS) return count
  throw new Error(`must be a whole number from 1 to ${MAX_WORKERS}, or auto for one per core (got ${JSON.stringify(value)})`)
}

/** A whole number from `minimum` to `maximum` (no bound when null), `fallback` when unset. */
function integer(minimum: number, maximum: number | null, fallback: number, description: string) {
  return Type.Integer({ minimum, ...(maximum === null ? {} : { maximum }), default: fallback, description })
}

/** The service's whole configuration, read from the environment. `sensitive` values are never echoed in an error message. */
export const ConfigSchema = Type.Object({
  PORT: integer(0, 65535, 8000, 'TCP port to listen on.'),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address to listen on.' }),
  WORKERS: Type.Transform(
    Type.String({ default: '1', description: `Server processes on the one port: 1 to ${MAX_WORKERS}, or auto for one per core.` })
  )
    .Decode(workerCount)
    .Encode(String),
  TRACER_STORE: Type.Union([Type.Literal('sqlite'), Type.Literal('mongodb')], { default: 'sqlite' }),
  TRACER_DB: Type.String({
    minLength: 1,
    default: './data/tracer.sqlite',
    description: 'SQLite file of the embedded store; its folder also keeps a generated JWT secret.'
  }),
  SQLITE_BUSY_TIMEOUT_MS: integer(0, 600_000, 5000, 'How long SQLite waits for another process’s lock before answering 503.'),
  TRACER_REBUILD_BATCH: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 500,
    description: 'Events a SQLite transaction makes again while the kept audit is rebuilt: the longest a write waits for the rebuild.'
  }),
  MONGODB_URL: Type.Optional(Type.String({ pattern: '^mongodb(\\+srv)?://', description: 'Connection string, with TRACER_STORE=mongodb.' })),
  MONGODB_DB: Type.String({ minLength: 1, maxLength: 63, pattern: '^[^/\\\\. "$*<>:|?]+$', default: 'frb_master' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32, sensitive: true, description: 'HS256 signing secret, at least 32 bytes.' })),
  JWT_ISSUER: Type.String({ minLength: 1, default: 'frb-tracer', description: 'The `iss` claim.' }),
  ACCESS_TOKEN_TTL: Type.Integer({ minimum: 1, maximum: 31_536_000, default: 1800 }),
  TOKEN_IAT_TOLERANCE_S: Type.Integer({
    minimum: 0,
    maximum: 3600,
    default: 5,
    description:
      'Seconds an access token’s `iat` may lie in the future (the issuing instance’s clock ahead of this one) before the token is refused.'
  }),
  REFRESH_TOKEN_TTL: Type.Integer({ minimum: 1, maximum: 315_360_000, default: 2_592_000 }),
  TRACER_SITES: siteList,
  MAX_WINDOW_DAYS: Type.Integer({ minimum: 1, maximum: 36_600, default: 366 }),
  STAGE_DEADLINES: Type.Transform(
    Type.String({
      default: DEFAULT_STAGE_DEADLINES,
      description:
        'How long after the event each stage may stay incomplete before the audit calls it stuck: ' +
        'stage=duration pairs, comma-separated, units s, m, h or d; stages not named keep their default.'
    })
  )
    .Decode(parseStageDeadlines)
    .Encode(formatStageDeadlines),
  MAX_STREAMED_RESPONSES: integer(1, 10_000, 32, 'Streamed responses (baseband callbacks, audit reports) in flight at once per process; 503 beyond.'),
  MAX_STREAMED_RESPONSES_PER_CLIENT: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 8,
    description: 'Of MAX_STREAMED_RESPONSES (and stage latency reports), how many one user may hold at once, and one client address twice that, whatever its users; 429 beyond.'
  }),
  MAX_STREAMS: integer(1, 100_000, 1000, 'Live trace streams open at once per process; 503 beyond.'),
  MAX_STREAMS_PER_CLIENT: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 100,
    description: 'Of MAX_STREAMS, how many one user may hold at once, and one client address twice that, whatever its users; 429 beyond.'
  }),
  STREAM_STALL_TIMEOUT_S: integer(1, 3600, 30, 'Seconds a streamed response waits for a client that takes none of its bytes before ending it.'),
  TRACER_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 1, maxLength: 256, sensitive: true })),
  AUTH_RATE_LIMIT: integer(1, null, 10, 'POST /auth attempts that do not log in, a minute, per client address and per (address, username).'),
  AUTH_ADDRESS_RATE_LIMIT: Type.Optional(
    Type.Integer({ minimum: 1, description: 'POST /auth attempts that do not log in, a minute, per client address; unset: AUTH_RATE_LIMIT.' })
  ),
  AUTH_USER_FAILURE_LIMIT: integer(1, null, 100, 'Failed POST /auth attempts per username within AUTH_USER_FAILURE_WINDOW.'),
  AUTH_USER_FAILURE_WINDOW: integer(1, 86_400, 3600, 'Seconds over which AUTH_USER_FAILURE_LIMIT counts.'),
  REFRESH_RATE_LIMIT: integer(1, null, 6000, 'POST /auth/refresh requests a minute per client address.'),
  SLOW_REQUEST_MS: integer(1, null, 1000, 'A request that takes longer is logged as a warning, with its time; every request is logged at debug.'),
  REQUEST_TIMEOUT_MS: integer(1000, 600_000, 30_000, 'A request whose headers and body have not all arrived by then is answered 408.'),
  KEEP_ALIVE_TIMEOUT_MS: integer(1000, 600_000, 72_000, 'How long an idle keep-alive connection stays open.'),
  TRUST_PROXY: Type.Optional(
    commaList('[0-9A-Fa-f:.]+(/[0-9]{1,3})?', 'Comma-separated addresses or CIDR ranges of proxies whose X-Forwarded-For names the client.')
  ),
  BEHIND_TLS: flag('true or false: whether clients reach the service over HTTPS (through a TLS-terminating proxy).'),
  METRICS_REQUIRE_TOKEN: flag('true or false: whether GET /metrics needs an access token (any role).'),
  CORS_ORIGINS: Type.Optional(commaList('https?://[^,\\s]+', 'Comma-separated origins allowed to call the API from a browser; unset: CORS is off.')),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info', description: 'fatal, error, warn, info, debug, trace or silent.' }
  ),
  NODE_ENV: Type.String({ default: 'development' })
})

export type Config = StaticDecode<typeof ConfigSchema>
export type ConfigInput = Partial<Record<keyof Config, string | undefined>>

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Validates an environment-like object (strings) into a typed configuration. Empty strings count as
 * unset. Throws a ConfigError whose message is one line naming the variable.
 */
export function loadConfig(env: ConfigInput | NodeJS.ProcessEnv): Config {
  const raw: Record<string, unknown> = {}
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = env[name as keyof typeof env]
    if (value !== undefined && value !== '') raw[name] = value
  }
  const candidate = Value.Default(ConfigSchema, numbersConverted(raw))
  const error = Value.Errors(ConfigSchema, candidate).First()
  if (error) {
    const name = error.path.split('/')[1] ?? error.path
    throw new ConfigError(`Invalid configuration: ${name} ${describe(name, error.message, raw[name])}`)
  }
  let config: Config
  try {
    config = Value.Decode(ConfigSchema, candidate)
  } catch (error) {
    // A value its decoding refuses (STAGE_DEADLINES) is named with the reason.
    if (!(error instanceof TransformDecodeError)) throw error
    throw new ConfigError(`Invalid configuration: ${error.path.split('/')[1] ?? error.path} ${error.message}`)
  }
  if (new Set(config.TRACER_SITES.names).size !== config.TRACER_SITES.names.length) {
    throw new ConfigError('Invalid configuration: TRACER_SITES lists a site twice')
  }
  const notAnAddress = config.TRUST_PROXY?.find((proxy) => !isAddressOrRange(proxy))
  if (notAnAddress !== undefined) {
    throw new ConfigError(`Invalid configuration: TRUST_PROXY holds ${JSON.stringify(notAnAddress)}, not an IP address or CIDR range`)
  }
  if (config.WORKERS > 1 && config.TRACER_STORE === 'sqlite' && config.TRACER_DB === ':memory:') {
    throw new ConfigError('Invalid configuration: WORKERS must be 1 with TRACER_DB=:memory:, a store each process would have its own of')
  }
  if (config.TRACER_STORE === 'mongodb' && config.MONGODB_URL === undefined) {
    throw new ConfigError('Invalid configuration: MONGODB_URL is required when TRACER_STORE=mongodb')
  }
  return config
}

function isAddressOrRange(text: string): boolean {
  const [address = '', prefix, ...rest] = text.split('/')
  const version = isIP(address)
  if (version === 0 || rest.length > 0) return false
  return prefix === undefined || Number(prefix) <= (version === 4 ? 32 : 128)
}

/**
 * Numeric variables as numbers. Stricter than TypeBox's Value.Convert, which reads "1.5" as the
 * integer 1: here it stays 1.5 and fails the integer check.
 */
function numbersConverted(raw: Record<string, unknown>): Record<string, unknown> {
  const converted = { ...raw }
  for (const [name, schema] of Object.entries(ConfigSchema.properties as Record<string, TSchema>)) {
    const value = raw[name]
    const numeric = schema.type === 'integer' || schema.type === 'number'
    if (numeric && typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) converted[name] = Number(value)
  }
  return converted
}

function describe(name: string, message: string, value: unknown): string {
  const schema = (ConfigSchema.properties as Record<string, TSchema>)[name]
  const shown =
    value === undefined
      ? 'unset'
      : schema?.['sensitive'] === true
        ? `${typeof value === 'string' ? value.length : 0} characters`
        : JSON.stringify(value)
  const hint = schema?.description === undefined ? '' : ` ${schema.description}`
  return `is not valid: ${message.toLowerCase()} (got ${shown}).${hint}`
}
