import { readFileSync } from 'node:fs'
import t from 'tap'
import { generateOpenApiYaml } from '../../src/openapi.js'
import { addUser, build, expiredToken } from '../helper.js'
import { call, declared, exercised } from './contract.js'

const json = { 'content-type': 'application/json' }
const tooLarge = 'x'.repeat(2 * 1024 * 1024)

t.test('openapi.yaml is what the code generates (run `npm run openapi` after changing a schema)', async (t) => {
  t.equal(readFileSync('openapi.yaml', 'utf8'), await generateOpenApiYaml())
})

t.test('real responses of every route and status match openapi.yaml', async (t) => {
  const app = await build(t)
  await addUser(app, 'ana', 'pw')

  const login = await call(t, app, { method: 'POST', url: '/auth', payload: { username: 'ana', password: 'pw' } })
  const { access_token, refresh_token } = login.json()
  await call(t, app, { method: 'POST', url: '/auth', payload: { username: 'ana' } })
  await call(t, app, { method: 'POST', url: '/auth', payload: { username: 'ana', password: 'wrong' } })
  await call(t, app, { method: 'POST', url: '/auth', headers: json, payload: tooLarge })
  await call(t, app, { method: 'POST', url: '/auth', headers: { 'content-type': 'text/xml' }, payload: '<x/>' })

  await call(t, app, { url: '/auth/verify', headers: { authorization: access_token } })
  await call(t, app, { url: '/auth/verify' })
  await call(t, app, { url: '/auth/verify', headers: { authorization: expiredToken('ana') } })

  const auth = { authorization: access_token }
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: auth, payload: { refresh_token } })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: auth, payload: { refresh_token: 'x' } })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: auth, payload: {} })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: { ...auth, ...json }, payload: tooLarge })
  await call(t, app, { method: 'POST', url: '/auth/refresh', headers: { ...auth, 'content-type': 'text/csv' }, payload: 'a' })

  await call(t, app, { url: '/version' })
  await call(t, app, { url: '/health' })
  await call(t, app, { url: '/ready' })
  await call(t, app, { url: '/openapi.json' })
  await app.store.close()
  await call(t, app, { url: '/ready' })

  const throttled = await build(t, { AUTH_RATE_LIMIT: '1' })
  await call(t, throttled, { method: 'POST', url: '/auth', payload: {} })
  await call(t, throttled, { method: 'POST', url: '/auth', payload: {} })

  const missing = [...declared].filter((entry) => !exercised.has(entry))
  t.strictSame(missing, [], 'every declared status was produced and checked')
})
