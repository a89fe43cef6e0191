import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { ConfigError, type Config } from './config.js'

export interface ResolvedSecret {
  secret: string
  /** Set when the secret was not configured and comes from (or was just written to) this file. */
  generatedFile?: string
}

/** JWT_SECRET, or outside production one kept beside the SQLite file, so that restarts and other instances there accept each other's tokens. */
export function resolveJwtSecret(config: Config): ResolvedSecret {
  if (config.JWT_SECRET !== undefined) return { secret: config.JWT_SECRET }
  if (config.NODE_ENV === 'production') {
    throw new ConfigError('Invalid configuration: JWT_SECRET is required when NODE_ENV=production')
  }
  const folder = config.TRACER_DB === ':memory:' ? resolve('data') : dirname(resolve(config.TRACER_DB))
  const file = join(folder, 'jwt-secret')
  mkdirSync(folder, { recursive: true })
  createWhole(file, randomBytes(48).toString('base64url'))
  const secret = readFileSync(file, 'utf8').trim()
  if (Buffer.byteLength(secret) < 32) {
    throw new ConfigError(`Invalid configuration: the generated secret in ${file} is shorter than 32 bytes; delete it`)
  }
  return { secret, generatedFile: file }
}

/** Creates `file` holding `content` unless it exists, never seen part-written ('wx' on the file itself let a reader see it empty). */
function createWhole(file: string, content: string): void {
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`
  writeFileSync(draft, content, { flag: 'wx', mode: 0o600 })
  try {
    // A hard link appears whole, and fails when the name is taken.
    linkSync(draft, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    rmSync(draft, { force: true })
  }
}
