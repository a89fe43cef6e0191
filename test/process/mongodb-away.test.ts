import t from 'tap'
import { packageVersion } from '../../src/package-info.js'
import { SERVER_SELECTION_TIMEOUT_MS } from '../../src/store/mongodb/connect.js'
import { claims, signJwt, TEST_SECRET } from '../helper.js'
import { closedPort, request, runCli, startServer, stop } from './processes.js'

const UNAVAILABLE = { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' }

t.test('MongoDB unreachable at start: the process listens at once, not ready, and stops promptly on SIGTERM', async (t) => {
  const server = await startServer(t, {
    TRACER_STORE: 'mongodb',
    MONGODB_URL: `mongodb://127.0.0.1:${await closedPort()}/`,
    JWT_SECRET: TEST_SECRET
  })
  const token = signJwt(claims('operator'))

  t.same(await request(`${server.url}/health`), { status: 200, body: { status: 'ok' } }, 'the process is up')
  t.same(await request(`${server.url}/version`), { status: 200, body: { version: packageVersion } })
  t.same(await request(`${server.url}/ready`), { status: 503, body: UNAVAILABLE }, 'not ready')
  t.same(await request(`${server.url}/v1/events`, { token }), { status: 503, body: UNAVAILABLE }, 'a read needs the store')
  t.same(
    await request(`${server.url}/auth`, { body: { username: 'admin', password: 'whatever' } }),
    { status: 503, body: UNAVAILABLE },
    'so does a login'
  )
  t.equal((await request(`${server.url}/auth/verify`)).status, 400, 'verifying a token needs no store: no header is 400')
  t.equal((await request(`${server.url}/auth/verify`, { token: 'garbage' })).status, 401)
  t.same(await request(`${server.url}/auth/verify`, { token }), { status: 200, body: { valid: true } })

  // Stopping must not wait for the connection attempt under way (each waits up to the server
  // selection timeout for a server).
  const started = Date.now()
  await stop(server.child)
  t.equal(server.child.exitCode, 0, 'a clean exit')
  t.ok(Date.now() - started < SERVER_SELECTION_TIMEOUT_MS, `stopped in ${Date.now() - started} ms`)
})

t.test('a MongoDB setting that waiting cannot fix stops the process with one clear line', async (t) => {
  // PORT 0: a start binds its address before it opens the store, and 8000 may be taken on a test machine.
  const result = await runCli(['serve'], {
    PORT: '0',
    TRACER_STORE: 'mongodb',
    MONGODB_URL: 'mongodb://127.0.0.1:27017/?tls=maybe',
    JWT_SECRET: TEST_SECRET
  })
  t.equal(result.status, 1)
  t.equal(result.stderr, 'tracer: cannot use the mongodb store: tls/ssl must be either "true" or "false"\n')
})
