import { join } from 'node:path'
import t from 'tap'
import { request, rssMb, startServer } from './processes.js'

const LOGINS = 24
const AT_ONCE = 4
/**
 * Each password hash takes 8 MiB from the C allocator. Left to its defaults, glibc hands the block
 * back to the kernel only the first time; after that it keeps one in the arena of every thread that
 * hashed, some 64 MB for good when libuv's four threads did. `npm start` fixes the allocator's mmap
 * threshold, so every block goes back when freed and only what Node itself allocates for the
 * requests remains. The first login starts the hashing thread, which lives on through the rounds.
 */
const RSS_GROWTH_LIMIT_MB = 24

t.test(`${LOGINS} logins, ${AT_ONCE} at a time, leave no password hashing memory behind`, async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password', AUTH_RATE_LIMIT: '1000' }
  const server = await startServer(t, env)
  const pid = server.child.pid!
  const login = () => request(`${server.url}/auth`, { body: { username: 'admin', password: 'admin-password' } })
  // The first login loads what logins need; what it leaves is not what this test asks about.
  t.equal((await login()).status, 200)
  const before = rssMb(pid)
  for (let round = 0; round < LOGINS / AT_ONCE; round += 1) {
    const answers = await Promise.all(Array.from({ length: AT_ONCE }, login))
    t.same(
      answers.map((answer) => answer.status),
      Array.from({ length: AT_ONCE }, () => 200)
    )
  }
  const growth = rssMb(pid) - before
  t.ok(growth < RSS_GROWTH_LIMIT_MB, `RSS grew by ${growth.toFixed(0)} MB after ${LOGINS} logins, less than ${RSS_GROWTH_LIMIT_MB} MB`)
})
