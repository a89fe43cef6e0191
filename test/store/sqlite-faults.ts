import Database from 'better-sqlite3'
import t from 'tap'
import { build, userWithTokens } from '../helper.js'

t.test('a store locked by another process: 503 envelope and /ready 503, then recovery by itself', async (t) => {
  const app = await build(t, { SQLITE_BUSY_TIMEOUT_MS: '100' })
  const { access_token } = await userWithTokens(app, 'pipeline', 'writer')
  const write = () =>
    app.inject({
      method: 'POST',
      url: '/v1/event-tracer/create-trace',
      headers: { authorization: access_token },
      payload: { event: 1, site: 'chime' }
    })
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)

  // Another process holds the write lock, as a stuck writer or a backup tool would.
  const other = new Database(app.config.TRACER_DB)
  other.exec('BEGIN IMMEDIATE')

  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.strictSame(ready.json(), { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' })
  const refused = await write()
  t.equal(refused.statusCode, 503)
  t.equal(refused.json().exception, 'ServiceUnavailable')
  const read = await app.inject({ url: '/v1/events/1', headers: { authorization: access_token } })
  t.equal(read.statusCode, 404, 'reads go on: WAL readers do not wait for the writer')

  other.exec('ROLLBACK')
  other.close()
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200, 'ready again without a restart')
  t.equal((await write()).statusCode, 200)
  t.not(await app.store.findTrace(1), null)
})
