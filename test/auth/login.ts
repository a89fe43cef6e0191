import t from 'tap'
import { addUser, build, login, type App } from '../helper.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const postAuth = (app: App, payload: unknown, extra: { remoteAddress?: string } = {}) =>
  app.inject({ method: 'POST', url: '/auth', payload: payload as object, ...extra })

t.test('right credentials give an access token and a UUID v4 refresh token', async (t) => {
  const app = await build(t)
  await addUser(app, 'ana', 'correct horse')
  const response = await postAuth(app, { username: 'ana', password: 'correct horse' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/json/)
  const body = response.json()
  t.same(Object.keys(body).sort(), ['access_token', 'refresh_token'])
  t.match(body.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/)
  t.match(body.refresh_token, UUID_V4)
})

t.test('wrong password and unknown user give identical answers', async (t) => {
  const app = await build(t)
  await addUser(app, 'ana', 'correct horse')
  const wrongPassword = await postAuth(app, { username: 'ana', password: 'battery staple' })
  const unknownUser = await postAuth(app, { username: 'bob', password: 'correct horse' })
  t.equal(wrongPassword.statusCode, 401)
  t.strictSame(wrongPassword.json(), { reasons: ['Invalid username or password.'], exception: 'AuthenticationFailed' })
  t.equal(unknownUser.statusCode, wrongPassword.statusCode)
  t.equal(unknownUser.body, wrongPassword.body)
  t.same(Object.keys(unknownUser.headers).sort(), Object.keys(wrongPassword.headers).sort())
})

t.test('passwords are stored hashed with scrypt, never in clear', async (t) => {
  const app = await build(t)
  await addUser(app, 'ana', 'correct horse')
  const user = await app.store.findUser('ana')
  t.match(user?.passwordHash, /^scrypt\$/)
  t.notMatch(user?.passwordHash, /correct horse/)
})

t.test('malformed credentials are 400 BadRequest naming the field', async (t) => {
  const app = await build(t)
  const cases: [unknown, RegExp][] = [
    [{ username: 'ana' }, /^body\.password is required$/],
    [{ password: 'x' }, /^body\.username is required$/],
    [{ username: '', password: 'x' }, /^body\.username /],
    [{ username: 'ana', password: 'x'.repeat(257) }, /^body\.password /],
    [{ username: ['ana'], password: 'x' }, /^body\.username /],
    [[], /^body /],
    [{ username: 'ana', password: 'x', remember_me: true }, /^body\.remember_me is not allowed$/]
  ]
  for (const [payload, reason] of cases) {
    const response = await postAuth(app, payload)
    t.equal(response.statusCode, 400, JSON.stringify(payload))
    t.match(response.json(), { exception: 'BadRequest', reasons: [reason] }, JSON.stringify(payload))
  }
})

t.test('a second login replaces the refresh token; earlier access tokens stay valid', async (t) => {
  const app = await build(t)
  await addUser(app, 'ana', 'pw')
  const first = await login(app, 'ana', 'pw')
  const second = await login(app, 'ana', 'pw')
  const refresh = (access: string, refresh_token: string) =>
    app.inject({ method: 'POST', url: '/auth/refresh', headers: { authorization: access }, payload: { refresh_token } })

  const stale = await refresh(first.access_token, first.refresh_token)
  t.equal(stale.statusCode, 401)
  t.equal(stale.json().exception, 'AuthenticationFailed')
  t.equal((await refresh(second.access_token, second.refresh_token)).statusCode, 200)
  const verify = await app.inject({ url: '/auth/verify', headers: { authorization: first.access_token } })
  t.equal(verify.statusCode, 200, 'access tokens cannot be revoked')
})

t.test('POST /auth is rate limited per client address, with Retry-After', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '3' })
  await addUser(app, 'ana', 'pw')
  const statuses = []
  for (let i = 0; i < 3; i++) {
    statuses.push((await postAuth(app, { username: `user${i}`, password: 'wrong' })).statusCode)
  }
  t.same(statuses, [401, 401, 401])
  const limited = await postAuth(app, { username: 'ana', password: 'pw' })
  t.equal(limited.statusCode, 429, 'even right credentials wait once the limit is hit')
  t.equal(limited.json().exception, 'TooManyRequests')
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After in seconds')
  const elsewhere = await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.0.2' })
  t.equal(elsewhere.statusCode, 200, 'another address has its own allowance')
})

t.test('POST /auth is rate limited per username across addresses', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '3' })
  await addUser(app, 'ana', 'pw')
  for (let i = 0; i < 3; i++) {
    const response = await postAuth(app, { username: 'ana', password: 'guess' + i }, { remoteAddress: `10.0.1.${i}` })
    t.equal(response.statusCode, 401)
  }
  const limited = await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.1.99' })
  t.equal(limited.statusCode, 429)
  const other = await postAuth(app, { username: 'bob', password: 'x' }, { remoteAddress: '10.0.1.98' })
  t.equal(other.statusCode, 401, 'other usernames are not affected')
})

t.test('invalid requests count against the address limit too', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '2' })
  await postAuth(app, {})
  await postAuth(app, 'not json at all')
  t.equal((await postAuth(app, { username: 'ana', password: 'pw' })).statusCode, 429)
})
