import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { hashPassword } from '../../src/auth/passwords.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { claims, signJwt, TEST_SECRET } from '../helper.js'
import { request, startServer, stop, waitFor } from './processes.js'
import { defaultSites } from '../sites.js'

const UNAVAILABLE = { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' }

t.test('a SQLite file the server may not write: /ready and writes 503; once it may, it serves again without a restart', async (t) => {
  const folder = t.testdir()
  const path = join(folder, 'tracer.sqlite')
  const setup = openSqliteStore(path, defaultSites)
  await setup.users.create({ name: 'pipeline', role: 'writer', password_hash: await hashPassword('pw'), created_at: Date.now() })
  await setup.close()
  // Root ignores file modes: the server then runs as nobody, whom they bind. It may create the
  // -wal and -shm files beside the store, as a service account normally may.
  const runAs = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined
  chmodSync(folder, 0o777)
  chmodSync(path, 0o444)

  const server = await startServer(t, { TRACER_DB: path, JWT_SECRET: TEST_SECRET }, runAs)
  const token = signJwt(claims('pipeline'))
  const createTrace = (event: number) =>
    request(`${server.url}/v1/event-tracer/create-trace`, { token, body: { event, site: 'chime' } })

  t.same(await request(`${server.url}/ready`), { status: 503, body: UNAVAILABLE }, 'not ready: a write cannot be committed')
  t.same(await createTrace(1), { status: 503, body: UNAVAILABLE }, 'a write is refused')
  t.equal((await request(`${server.url}/v1/events/1`, { token })).status, 404, 'reads go on')

  chmodSync(path, 0o666)
  await waitFor(async () => (await request(`${server.url}/ready`)).status === 200, 10_000)
  t.same(await createTrace(2), { status: 200, body: { status: true } }, 'writes work again, in the same process')
  await stop(server.child)

  const after = openSqliteStore(path, defaultSites)
  t.teardown(() => after.close())
  t.not(await after.traces.find(2), null, 'the write is in the file')
})
