import { randomBytes } from 'node:crypto'
import { hashPassword } from './auth/passwords.js'
import type { Config } from './config.js'
import type { Store } from './store/port.js'

/**
 * On an empty store, creates `admin` (role admin) with TRACER_ADMIN_PASSWORD or a random password
 * that `announce` shows once. Of several instances starting on one empty store, only the one whose
 * insert wins announces.
 */
export async function ensureAdminUser(store: Store, config: Config, announce: (line: string) => void) {
  if ((await store.countUsers()) > 0) return
  const password = config.TRACER_ADMIN_PASSWORD ?? randomBytes(18).toString('base64url')
  const created = await store.createUser({
    name: 'admin',
    role: 'admin',
    passwordHash: await hashPassword(password),
    createdAt: Date.now()
  })
  if (created && config.TRACER_ADMIN_PASSWORD === undefined) {
    announce(
      `Created user "admin" (role admin) with password ${password}\n` +
        'It is shown only now. Change it with: npm run tracer -- users passwd admin --password-stdin'
    )
  }
}
