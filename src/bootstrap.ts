import { randomBytes } from 'node:crypto'
import { hashPassword } from './auth/passwords.js'
import type { Config } from './config.js'
import type { Store } from './store/port.js'

/**
 * On an empty store, creates `admin` (role admin) with TRACER_ADMIN_PASSWORD or a random password
 * that `announce` shows once. Of several instances starting on one empty store, only the one whose
 * insert wins announces. Resolves to whether this call created the user: the store was new.
 * On a store with users, a TRACER_ADMIN_PASSWORD is announced as not applied, so that nobody
 * takes it for the password.
 */
export async function ensureAdminUser(store: Store, config: Config, announce: (line: string) => void): Promise<boolean> {
  if ((await store.users.count()) > 0) {
    if (config.TRACER_ADMIN_PASSWORD !== undefined) announce(PASSWORD_NOT_APPLIED)
    return false
  }
  const password = config.TRACER_ADMIN_PASSWORD ?? randomBytes(18).toString('base64url')
  const created = await store.users.create({
    name: 'admin',
    role: 'admin',
    password_hash: await hashPassword(password),
    created_at: Date.now()
  })
  if (!created) return false
  if (config.TRACER_ADMIN_PASSWORD === undefined) {
    announce(
      `Created user "admin" (role admin) with password ${password}\n` +
        'It is shown only now. Change it with: npm run tracer -- users passwd admin --password-stdin'
    )
  }
  return true
}

const PASSWORD_NOT_APPLIED =
  'TRACER_ADMIN_PASSWORD was not applied: the store already has users. ' +
  'To set it: npm run tracer -- users passwd admin --password-stdin'

export const DEMO = { events: 2000, days: 30, seed: 1 }

/**
 * A new embedded store outside production gets a small demo data set, so a new user's first
 * request returns real-looking data. Never on MongoDB: a new users collection says nothing of
 * whether the pipeline's own collections hold real data. The data ends at `now` (tests fix it).
 */
export async function seedDemoOnFirstStart(store: Store, config: Config, announce: (line: string) => void, now = Date.now()) {
  if (config.TRACER_STORE !== 'sqlite' || config.NODE_ENV === 'production') return
  // Only a first start needs the generator; a server on a store in use never loads it.
  const { seedDemo } = await import('./demo/generate.js')
  const counts = await seedDemo(store, config.TRACER_SITES, { ...DEMO, now })
  announce(
    `Seeded a demo data set: ${counts.events} events over the last ${DEMO.days} days, ` +
      `${counts.basebandEvents} of them asking for baseband data (npm run tracer -- seed --demo --help for more).`
  )
}

/** The store's start-up work before a server listens: the first admin, then on a new store the demo. */
export async function prepareStore(store: Store, config: Config, announce: (line: string) => void) {
  if (await ensureAdminUser(store, config, announce)) await seedDemoOnFirstStart(store, config, announce)
}
