import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from './processes.js'

export interface OwnStore {
  db: string
  /** Every user's password. */
  password: string
  /** A fresh JWT secret for the service on this store. */
  secret: string
  remove(): void
}

/**
 * A small SQLite store of one measurement's own, in a temporary folder: `events` demo events over
 * the last 365 days (`tracer seed --demo`), and `users`, each a writer, added before the service's
 * first start so that it seeds nothing more.
 */
export async function ownStore(events: number, users: string[]): Promise<OwnStore> {
  const folder = mkdtempSync(join(tmpdir(), 'frb-bench-'))
  const remove = () => rmSync(folder, { recursive: true, force: true })
  try {
    const db = join(folder, 'tracer.sqlite')
    const password = randomBytes(18).toString('base64url')
    const seeded = await runCli(['seed', '--demo', '--events', String(events), '--days', '365'], { TRACER_DB: db })
    if (seeded.status !== 0) throw new Error(`tracer seed failed: ${seeded.stderr}`)
    for (const user of users) {
      const added = await runCli(['users', 'add', user, '--role', 'writer', '--password-stdin'], { TRACER_DB: db }, { input: `${password}\n` })
      if (added.status !== 0) throw new Error(`tracer users add ${user} failed: ${added.stderr}`)
    }
    return { db, password, secret: randomBytes(48).toString('base64url'), remove }
  } catch (error) {
    remove()
    throw error
  }
}
