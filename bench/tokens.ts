import { createHmac, randomBytes } from 'node:crypto'
import { runCli } from './processes.js'

export interface BenchUser {
  name: string
  password: string
}

/**
 * Makes `name` a writer with a fresh password on the store at `db`, through the command-line tool
 * (as an operator would). A reused store has the user already: then only the password changes.
 */
export async function ensureWriter(db: string, name = 'bench'): Promise<BenchUser> {
  const password = randomBytes(18).toString('base64url')
  const env = { TRACER_DB: db }
  let result = await runCli(['users', 'add', name, '--role', 'writer', '--password-stdin'], env, { input: `${password}\n` })
  if (result.status !== 0 && /exists already/.test(result.stderr)) {
    result = await runCli(['users', 'passwd', name, '--password-stdin'], env, { input: `${password}\n` })
    if (result.status === 0) result = await runCli(['users', 'set-role', name, 'writer'], env)
  }
  if (result.status !== 0) throw new Error(`could not prepare user ${name}: ${result.stderr}`)
  return { name, password }
}

/** POST /auth, as a client does; resolves to the access token. */
export async function logIn(url: string, user: BenchUser): Promise<string> {
  const response = await fetch(`${url}/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: user.name, password: user.password })
  })
  const body = (await response.json()) as { access_token?: string }
  if (!response.ok || typeof body.access_token !== 'string') {
    throw new Error(`POST /auth answered ${response.status}: ${JSON.stringify(body)}`)
  }
  return body.access_token
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/**
 * An HS256 token with the service's claims that expired half an hour ago, signed with the same
 * secret: the service must spend a full signature check before it can answer "Signature has expired."
 * Signed by hand with node:crypto so the bench does not lean on the service's own JWT library.
 */
export function expiredToken(secret: string, userId: string, issuer = 'frb-tracer'): string {
  const now = Math.floor(Date.now() / 1000)
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ user_id: userId, exp: now - 1800, iat: now - 3600, iss: issuer })}`
  const signature = createHmac('sha256', secret).update(unsigned).digest('base64url')
  return `${unsigned}.${signature}`
}
