import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { HASHING_THREADS, hashPassword, verifyPassword } from '../../src/auth/passwords.js'
import { HASHING_NICE, ScryptThreads, type ScryptJob } from '../../src/auth/scrypt-threads.js'
import { addUser, build } from '../helper.js'

/** The nice value in a stat file of /proc (Linux: per thread, its 19th field). */
const niceIn = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])

/** The nice value of each thread of this process. */
function niceOfThreads(): number[] {
  return readdirSync('/proc/self/task').flatMap((task) => {
    try {
      return [niceIn(readFileSync(`/proc/self/task/${task}/stat`, 'utf8'))]
    } catch {
      return [] // ended meanwhile
    }
  })
}

const linuxOnly = { skip: process.platform === 'linux' ? false : 'threads have a priority of their own on Linux' }

t.test('four logins at once hash on at most HASHING_THREADS threads, each at HASHING_NICE, which outlive a refused cost', linuxOnly, async (t) => {
  const app = await build(t)
  await addUser(app, 'ana', 'pw')
  const logins = await Promise.all(
    ['pw', 'pw', 'wrong', 'pw'].map((password, i) =>
      app.inject({ method: 'POST', url: '/auth', payload: { username: 'ana', password }, remoteAddress: `10.0.8.${i}` })
    )
  )
  t.strictSame(logins.map((response) => response.statusCode), [200, 200, 401, 200])
  const lowest = () => niceOfThreads().filter((nice) => nice === HASHING_NICE).length
  t.ok(lowest() >= 1, `the hashes were made by a thread at nice ${HASHING_NICE}`)
  t.ok(lowest() <= HASHING_THREADS, `${lowest()} such threads, at most ${HASHING_THREADS}`)
  t.equal(niceIn(readFileSync('/proc/self/stat', 'utf8')), 0, 'the event loop keeps its priority')

  await t.rejects(hashPassword('x', { N: 3, r: 8, p: 1 }), 'N not a power of two: scrypt refuses it')
  const cheap = { N: 2 ** 10, r: 8, p: 1 }
  const passwords = ['one', 'two', 'three', 'four', 'five']
  const hashes = await Promise.all(passwords.map((password) => hashPassword(password, cheap)))
  t.strictSame(await Promise.all(hashes.map((hash, i) => verifyPassword(passwords[i]!, hash))), [true, true, true, true, true], 'the threads hash on')
  t.equal(await verifyPassword('two', hashes[0]), false)
  t.ok(lowest() <= HASHING_THREADS, 'still at most HASHING_THREADS threads')
})

t.test('an unknown user’s attempt costs what the last password that matched cost: PASSWORD_COST until one has', async (t) => {
  const costs: number[] = []
  // The threads as they are, but saying the cost of each hash asked of them.
  class CountedThreads extends ScryptThreads {
    override derive(job: ScryptJob) {
      costs.push(job.options.N!)
      return super.derive(job)
    }
  }
  // Absolute URLs: tap resolves relative ones from the test's source-mapped path (test/, not dist/test/).
  const compiled = (path: string) => new URL(path, import.meta.url).href
  const passwords = await t.mockImport<typeof import('../../src/auth/passwords.js')>(compiled('../../src/auth/passwords.js'), {
    [compiled('../../src/auth/scrypt-threads.js')]: { ScryptThreads: CountedThreads, HASHING_NICE }
  })
  const cheap = { N: 2 ** 10, r: 8, p: 1 }
  const stored = await passwords.hashPassword('right', cheap)
  costs.length = 0
  t.equal(await passwords.verifyPassword('any', undefined), false, 'an unknown user, before any login')
  t.equal(await passwords.verifyPassword('wrong', stored), false, 'a wrong password')
  t.equal(await passwords.verifyPassword('any', undefined), false, 'an unknown user, after a wrong password only')
  t.equal(await passwords.verifyPassword('right', stored), true, 'the right password')
  t.equal(await passwords.verifyPassword('any', undefined), false, 'an unknown user, after it')
  t.strictSame(costs, [passwords.PASSWORD_COST.N, cheap.N, passwords.PASSWORD_COST.N, cheap.N, cheap.N], 'one hash each, at the cost of the last match')
})
