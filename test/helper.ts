import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import type { Test } from 'tap'
import type { Role, TokenPair } from '../schemas/auth.js'
import Fastify, { type FastifyInstance } from 'fastify'
import { appPlugin, buildApp, serverOptions, type AppOptions } from '../src/app.js'
import { hashPassword } from '../src/auth/passwords.js'
import { loadConfig, type Config, type ConfigInput } from '../src/config.js'
import { openStore } from '../src/store/open.js'

export const TEST_SECRET = 'test-secret-that-is-at-least-32-bytes-long'
export const TEST_ISSUER = 'frb-tracer'

export type App = Awaited<ReturnType<typeof buildApp>>

/** The configuration of a test: a fresh SQLite file in the test's own folder, no log output. */
export function testConfig(t: Test, env: ConfigInput = {}): Config {
  return loadConfig({
    TRACER_DB: join(t.testdir(), 'tracer.sqlite'),
    JWT_SECRET: TEST_SECRET,
    LOG_LEVEL: 'silent',
    ...env
  })
}

/** What a test may set beyond the configuration: the app's clock, where its log goes, how its close drains. */
export type BuildOptions = Pick<AppOptions, 'now' | 'logStream' | 'draining'>

/** The production app on a fresh temporary store, closed when the test ends. */
export async function build(t: Test, env: ConfigInput = {}, options: BuildOptions = {}): Promise<App> {
  const config = testConfig(t, env)
  const app = await buildApp({ config, store: await openStore(config), ...options })
  t.teardown(() => app.close())
  return app
}

/**
 * The production app plus probe routes that a test adds to exercise shared machinery (the role
 * hook, the masking of unexpected errors) that no route of its own exercises yet.
 */
export async function buildWithProbes(t: Test, addProbes: (app: FastifyInstance) => void, env: ConfigInput = {}, options: BuildOptions = {}) {
  const config = testConfig(t, env)
  const app = Fastify(serverOptions(config))
  await app.register(appPlugin, { config, store: await openStore(config), ...options })
  app.register(async (probes) => addProbes(probes))
  await app.ready()
  t.teardown(() => app.close())
  return app
}

/**
 * Test users get a cheap scrypt hash (N = 2^10): logging in still runs the production verification,
 * which reads the cost from the stored hash, but a suite of hundreds of logins stays fast.
 */
const FIXTURE_COST = { N: 2 ** 10, r: 8, p: 1 }

export async function addUser(app: App | FastifyInstance, name: string, password: string, role: Role = 'reader') {
  const password_hash = await hashPassword(password, FIXTURE_COST)
  const created = await app.store.users.create({ name, role, password_hash, created_at: Date.now() })
  if (!created) throw new Error(`user ${name} exists`)
}

export async function login(app: App | FastifyInstance, username: string, password: string): Promise<TokenPair> {
  const response = await app.inject({ method: 'POST', url: '/auth', payload: { username, password } })
  if (response.statusCode !== 200) throw new Error(`login of ${username} answered ${response.statusCode}: ${response.body}`)
  return response.json()
}

/** A user with a fresh pair of tokens. */
export async function userWithTokens(app: App | FastifyInstance, name: string, role: Role = 'reader') {
  await addUser(app, name, `${name}-password`, role)
  return login(app, name, `${name}-password`)
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')

/** A JWT with any header, payload and signing secret: the raw material of forged tokens. */
export function signJwt(
  payload: object | string,
  { header = { alg: 'HS256', typ: 'JWT' }, secret = TEST_SECRET } = {}
): string {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload)
  const input = `${base64url(JSON.stringify(header))}.${base64url(body)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

/** Claims as this service issues them at `nowMs` (an app's clock), valid for 30 minutes unless overridden. */
export function claims(userId: string, overrides: Record<string, unknown> = {}, nowMs = Date.now()) {
  const iat = Math.floor(nowMs / 1000)
  return { user_id: userId, exp: iat + 1800, iat, iss: TEST_ISSUER, ...overrides }
}

/** A correctly signed token that expired an hour ago. */
export function expiredToken(userId: string): string {
  const iat = Math.floor(Date.now() / 1000) - 7200
  return signJwt(claims(userId, { iat, exp: iat + 3600 }))
}
