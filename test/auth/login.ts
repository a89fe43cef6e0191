import t from 'tap'
import { addUser, build, login, type App } from '../helper.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const postAuth = (app: App, payload: unknown, extra: { remoteAddress?: string; headers?: Record<string, string> } = {}) =>
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
  const user = await app.store.users.find('ana')
  t.match(user?.password_hash, /^scrypt\$/)
  t.notMatch(user?.password_hash, /correct horse/)
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

t.test('wrong passwords from other addresses do not lock the owner out', async (t) => {
  const app = await build(t)
  await addUser(app, 'admin', 'the right one')
  // Three addresses spend their whole allowance (10 a minute) guessing, and more.
  for (let i = 0; i < 36; i++) {
    await postAuth(app, { username: 'admin', password: `guess ${i}` }, { remoteAddress: `10.0.2.${i % 3}` })
  }
  const owner = await postAuth(app, { username: 'admin', password: 'the right one' }, { remoteAddress: '10.0.2.200' })
  t.equal(owner.statusCode, 200, 'the owner, from an address of their own, logs in')
  const guesser = await postAuth(app, { username: 'admin', password: 'the right one' }, { remoteAddress: '10.0.2.0' })
  t.equal(guesser.statusCode, 429, 'a guessing address waits, even with the right password')
})

t.test('pipeline workers logging in as one user never trip a limit by succeeding', async (t) => {
  const app = await build(t)
  await addUser(app, 'pipeline', 'pw')
  const statuses = new Set<number>()
  for (let i = 0; i < 150; i++) {
    // 15 workers on 15 hosts, each logging in ten times: at the limit of its address, never past it.
    statuses.add((await postAuth(app, { username: 'pipeline', password: 'pw' }, { remoteAddress: `10.0.3.${i % 15}` })).statusCode)
  }
  t.strictSame([...statuses], [200])
})

t.test('failed attempts per username are limited across addresses, with Retry-After', async (t) => {
  const app = await build(t, { AUTH_USER_FAILURE_LIMIT: '3', AUTH_USER_FAILURE_WINDOW: '600' })
  await addUser(app, 'ana', 'pw')
  await addUser(app, 'bob', 'pw')
  t.equal((await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.1.50' })).statusCode, 200)
  for (let i = 0; i < 2; i++) {
    const response = await postAuth(app, { username: 'ana', password: 'guess' + i }, { remoteAddress: `10.0.1.${i}` })
    t.equal(response.statusCode, 401)
  }
  const below = await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.1.51' })
  t.equal(below.statusCode, 200, 'below the limit the right password works; successes do not count')
  t.equal((await postAuth(app, { username: 'ana', password: 'guess' }, { remoteAddress: '10.0.1.2' })).statusCode, 401)
  const limited = await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.1.2' })
  t.equal(limited.statusCode, 429, 'at the limit an address that failed waits, even with the right password')
  t.equal(limited.json().exception, 'TooManyRequests')
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(retryAfter > 0 && retryAfter <= 600, `Retry-After ${retryAfter} is within the window`)
  const unknown = await postAuth(app, { username: 'nobody', password: 'x' }, { remoteAddress: '10.0.1.98' })
  t.equal(unknown.statusCode, 401, 'other usernames are not affected')
  t.equal((await postAuth(app, { username: 'bob', password: 'pw' }, { remoteAddress: '10.0.1.98' })).statusCode, 200)
  const fresh = await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.1.99' })
  t.equal(fresh.statusCode, 200, 'at the limit an address that has not failed still logs in with the right password')
  t.equal((await postAuth(app, { username: 'ana', password: 'guess' }, { remoteAddress: '10.0.1.97' })).statusCode, 401, 'and a wrong one from a fresh address is a plain 401')
  t.equal((await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.1.97' })).statusCode, 429, 'after which that address waits too')
})

t.test('strangers guessing from ten addresses at their full rate cannot keep the owner out', async (t) => {
  const app = await build(t)
  await addUser(app, 'owner', 'the right one')
  // Ten addresses at ten wrong passwords a minute: the username's 100 failures an hour, reached.
  for (let i = 0; i < 100; i++) {
    t.equal((await postAuth(app, { username: 'owner', password: `guess ${i}` }, { remoteAddress: `10.0.8.${i % 10}` })).statusCode, 401)
  }
  const guesser = await postAuth(app, { username: 'owner', password: 'the right one' }, { remoteAddress: '10.0.8.10' })
  const home = await postAuth(app, { username: 'owner', password: 'the right one' }, { remoteAddress: '10.0.9.1' })
  t.equal(home.statusCode, 200, 'the owner, from an address that never failed, logs in')
  t.equal(guesser.statusCode, 200, 'as does any address that has not failed: the username limit holds back only the guessers')
  for (let i = 0; i < 10; i++) {
    const again = await postAuth(app, { username: 'owner', password: 'the right one' }, { remoteAddress: `10.0.8.${i}` })
    t.equal(again.statusCode, 429, `guessing address 10.0.8.${i} waits out the window, right password or not`)
  }
})

t.test('unknown usernames count their failures like known ones', async (t) => {
  const app = await build(t, { AUTH_USER_FAILURE_LIMIT: '2' })
  const answers = []
  for (let i = 0; i < 3; i++) {
    answers.push((await postAuth(app, { username: 'ghost', password: 'x' }, { remoteAddress: `10.0.4.${i}` })).statusCode)
  }
  answers.push((await postAuth(app, { username: 'ghost', password: 'x' }, { remoteAddress: '10.0.4.0' })).statusCode)
  t.strictSame(answers, [401, 401, 401, 429], 'the answers do not tell whether the user exists')
})

t.test('failed attempts count per (address, username) as well as per address', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '3', AUTH_ADDRESS_RATE_LIMIT: '100' })
  await addUser(app, 'ana', 'pw')
  await addUser(app, 'bob', 'pw')
  for (let i = 0; i < 3; i++) t.equal((await postAuth(app, { username: 'ana', password: `guess ${i}` })).statusCode, 401)
  const fourth = await postAuth(app, { username: 'ana', password: 'pw' })
  t.equal(fourth.statusCode, 429, 'the fourth attempt of one username from one address waits, even with the right password')
  t.ok(Number(fourth.headers['retry-after']) > 0)
  t.equal((await postAuth(app, { username: 'bob', password: 'pw' })).statusCode, 200, 'another username from that address')
  const elsewhere = await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.5.1' })
  t.equal(elsewhere.statusCode, 200, 'the same username from another address')
})

t.test('logins that succeed count nowhere: workers behind one address log in as often as they need, and nobody there is locked out', async (t) => {
  const app = await build(t)
  await addUser(app, 'pipeline', 'pw')
  await addUser(app, 'operator', 'the operator’s')
  const statuses = new Set<number>()
  // Thirty logins a minute from one NAT: three times the limit of its address, all of them right.
  for (let i = 0; i < 30; i++) statuses.add((await postAuth(app, { username: 'pipeline', password: 'pw' }, { remoteAddress: '10.0.6.1' })).statusCode)
  t.strictSame([...statuses], [200], 'every worker logs in')
  const operator = await postAuth(app, { username: 'operator', password: 'the operator’s' }, { remoteAddress: '10.0.6.1' })
  t.equal(operator.statusCode, 200, 'the operator behind the same NAT logs in')
  const typo = await postAuth(app, { username: 'operator', password: 'the operators' }, { remoteAddress: '10.0.6.1' })
  t.equal(typo.statusCode, 401, 'a typo there is answered as a typo, not refused')
})

t.test('attempts sent all at once are held to the limit: each counts as failed until it has logged in', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '3' })
  await addUser(app, 'ana', 'pw')
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => postAuth(app, { username: 'ana', password: `guess ${i}` }, { remoteAddress: '10.0.6.2' })))
  const guessed = answers.filter((answer) => answer.statusCode === 401).length
  t.ok(guessed >= 1 && guessed <= 3, `${guessed} of twelve guesses at once were checked, at most the limit`)
  t.strictSame(new Set(answers.map((answer) => answer.statusCode)), new Set([401, 429]), 'the others refused with 429')
  t.equal((await postAuth(app, { username: 'ana', password: 'pw' }, { remoteAddress: '10.0.6.2' })).statusCode, guessed === 3 ? 429 : 200, 'the count holds what was checked, no more')
})

t.test('behind a proxy named in TRUST_PROXY the limits are per client, from X-Forwarded-For', async (t) => {
  const proxy = { remoteAddress: '10.0.7.1' }
  const via = (client: string) => ({ ...proxy, headers: { 'x-forwarded-for': client } })
  const app = await build(t, { AUTH_RATE_LIMIT: '2', TRUST_PROXY: '10.0.7.0/24' })
  await addUser(app, 'ana', 'pw')
  for (let i = 0; i < 2; i++) await postAuth(app, { username: 'ana', password: 'guess' }, via('203.0.113.5'))
  const right = { username: 'ana', password: 'pw' }
  t.equal((await postAuth(app, right, via('203.0.113.5'))).statusCode, 429, 'the guessing client waits')
  t.equal((await postAuth(app, right, via('198.51.100.7'))).statusCode, 200, 'the owner, through the same proxy, does not')
  const spoofed = await postAuth(app, right, { remoteAddress: '203.0.113.5', headers: { 'x-forwarded-for': '198.51.100.99' } })
  t.equal(spoofed.statusCode, 429, 'a client that is not a trusted proxy cannot choose its address')

  const untrusting = await build(t, { AUTH_RATE_LIMIT: '2' })
  await addUser(untrusting, 'ana', 'pw')
  for (let i = 0; i < 2; i++) await postAuth(untrusting, { username: 'ana', password: 'guess' }, via('203.0.113.5'))
  const viaUntrusting = await postAuth(untrusting, right, via('198.51.100.7'))
  t.equal(viaUntrusting.statusCode, 429, 'without TRUST_PROXY X-Forwarded-For is ignored')
})

t.test('invalid requests count against the address limit too', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '2' })
  await postAuth(app, {})
  await postAuth(app, 'not json at all')
  t.equal((await postAuth(app, { username: 'ana', password: 'pw' })).statusCode, 429)
})
