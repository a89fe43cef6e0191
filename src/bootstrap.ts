import { randomBytes } from 'node:crypto'
import { hashPassword } from './auth/passwords.js'
import type { Config } from './config.js'
import type { DemoSeeding, Store } from './store/port.js'

/**
 * On an empty store, creates `admin` with TRACER_ADMIN_PASSWORD or a random password shown once (by the
 * one instance whose insert wins); resolves to whether it did. On a store with users, a
 * TRACER_ADMIN_PASSWORD is announced as not applied, so that nobody takes it for the password.
 */
export async function ensureAdminUser(store: Store, config: Config, announce: (line: string) => void): Promise<boolean> {
  if ((await store.users.count()) > 0) {
    if (config.TRACER_ADMIN_PASSWORD !== undefined) announce(PASSWORD_NOT_APPLIED)
    return false
  }
  const password = config.TRACER_ADMIN_PASSWORD ?? randomBytes(18).toString('base64url')
  const created = await store.users.create({ name: 'admin', role: 'admin', password_hash: await hashPassword(password), created_at: Date.now() })
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
 * Outside production, a store a server's start created receives a demo data set ending at `now`, while it
 * holds no data (the demo's event numbers would replace real ones); one transaction, so a start killed
 * half way leaves it for the next. `adminCreated`: where a new user would look for the demo. Resolves to whether it seeded.
 */
export async function seedDemoOnFirstStart(
  store: Store,
  config: Config,
  announce: (line: string) => void,
  { now = Date.now(), adminCreated = false }: { now?: number; adminCreated?: boolean } = {}
): Promise<boolean> {
  if (config.NODE_ENV === 'production') return false
  let outcome: DemoSeeding = 'not-awaited'
  let basebandEvents = 0
  if (await store.firstStart.awaitsDemo()) {
    // Only a start that seeds loads the generator: a server on a store in use never does.
    const { demoBatch } = await import('./demo/generate.js')
    outcome = await store.firstStart.seedDemo(() => {
      const batch = demoBatch(config.TRACER_SITES, { ...DEMO, now })
      basebandEvents = batch.baseband
      return batch
    }, now / 1000)
  }
  const message = demoMessage(outcome, basebandEvents, adminCreated)
  if (message !== undefined) announce(message)
  return outcome === 'seeded'
}

/** What a start says of the demo data: why it seeded nothing, where a new user would expect it. */
function demoMessage(outcome: DemoSeeding, basebandEvents: number, adminCreated: boolean): string | undefined {
  switch (outcome) {
    case 'seeded':
      return (
        `Seeded a demo data set: ${DEMO.events} events over the last ${DEMO.days} days, ` +
        `${basebandEvents} of them asking for baseband data (npm run tracer -- seed --demo --help for more).`
      )
    case 'holds-data':
      return (
        'Did not seed the demo data set: the store already holds events, traces, datatrail or heartbeats ' +
        'written since it was created, and the demo would replace some of them.'
      )
    case 'not-awaited':
      // A first admin on a store this start did not create: its data, or its emptiness, is someone else's.
      return adminCreated
        ? 'Did not seed the demo data set: only a store that a server creates receives it, and this one was created before ' +
            '(npm run tracer -- seed --demo adds it by hand).'
        : undefined
  }
}

/** The store's start-up work before a server listens: the first admin, then on a store it created the demo. */
export async function prepareStore(store: Store, config: Config, announce: (line: string) => void) {
  const adminCreated = await ensureAdminUser(store, config, announce)
  await seedDemoOnFirstStart(store, config, announce, { adminCreated })
}
