import t from 'tap'
import { event, get, tracerApp } from './fixtures.js'

// JSON.parse accepts three things and changes them without a word; every body is read strictly so
// that what is stored is what the client meant, or the client learns why not.
const raw = (app: Awaited<ReturnType<typeof tracerApp>>['app'], token: string, payload: string | Buffer, contentType = 'application/json') =>
  app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: token, 'content-type': contentType }, payload })

const line = JSON.stringify(event(1, '2024-05-01T10:00:00Z'))
const withMember = (member: string) => `[{${line.slice(1, -1)},${member}}]`

t.test('a member given twice is refused, in a JSON body and in an NDJSON line, naming the member and where', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const json = await raw(app, writer, withMember('"snr":99'))
  t.equal(json.statusCode, 400)
  t.strictSame(json.json(), { exception: 'BadRequest', reasons: ['body[0] has the member "snr" twice: send each member of an object once'] })
  const nested = await raw(app, writer, `[{${line.slice(1, -1).replace('"got":{}', '"got":{"baseband":true,"baseband":false}')}}]`)
  t.strictSame(nested.json(), { exception: 'BadRequest', reasons: ['body[0].actions.got has the member "baseband" twice: send each member of an object once'] })
  const ndjson = await raw(app, writer, `${line}\n${withMember('"snr":99').slice(1, -1)}\n`, 'application/x-ndjson')
  t.strictSame(ndjson.json(), { exception: 'BadRequest', reasons: ['body[1] has the member "snr" twice: send each member of an object once'] })
  const escaped = await raw(app, writer, withMember('"\\u0073nr":99'))
  t.equal(escaped.statusCode, 400, 'the same name written with an escape is the same name')
  t.equal((await get(app, '/v1/events/1', reader)).statusCode, 404, 'nothing stored')
})

t.test('a lone surrogate is refused rather than stored as U+FFFD; a pair is stored as its character', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const lone = await raw(app, writer, `[${line.replace('"EXT"', '"EXT\\ud800"')}]`)
  t.equal(lone.statusCode, 400)
  t.strictSame(lone.json(), {
    exception: 'BadRequest',
    reasons: ['body[0].known_source_name holds a lone surrogate (\\ud800), which is no Unicode character: send the pair, or neither half']
  })
  const lowAlone = await raw(app, writer, `[${line.replace('"EXT"', '"\\udc00EXT"')}]`)
  t.match(lowAlone.json(), { reasons: [/holds a lone surrogate \(\\udc00\)/] })
  t.equal((await get(app, '/v1/events/1', reader)).statusCode, 404, 'nothing stored')
  const pair = await raw(app, writer, `[${line.replace('"EXT"', '"EXT \\ud83d\\udce1"')}]`)
  t.equal(pair.statusCode, 200, pair.body)
  t.equal((await get(app, '/v1/events/1', reader)).json().known_source_name, 'EXT \u{1f4e1}')
})

t.test('a member named __proto__ is refused for what it is, not as "not valid JSON"', async (t) => {
  const { app, writer } = await tracerApp(t)
  const response = await raw(app, writer, withMember('"__proto__":{"polluted":true}'))
  t.strictSame(response.json(), {
    exception: 'BadRequest',
    reasons: ['body[0] has a member named "__proto__", which this service refuses: in JavaScript it names the prototype of an object']
  })
  const login = await app.inject({ method: 'POST', url: '/auth', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{},"username":"a","password":"b"}' })
  t.match(login.json(), { exception: 'BadRequest', reasons: [/^body has a member named "__proto__"/] })
})

t.test('bytes that are not UTF-8 are refused rather than stored as U+FFFD', async (t) => {
  const { app, writer, reader } = await tracerApp(t)
  const [before, after] = line.split('EXT')
  for (const [contentType, payload] of [
    ['application/json', Buffer.concat([Buffer.from(`[${before}EXT`), Buffer.from([0xff, 0xfe]), Buffer.from(`${after}]`)])],
    ['application/x-ndjson', Buffer.concat([Buffer.from(`${before}EXT`), Buffer.from([0xc3]), Buffer.from(`${after}\n`)])]
  ] as const) {
    const response = await raw(app, writer, payload, contentType)
    t.equal(response.statusCode, 400, contentType)
    t.strictSame(response.json(), { exception: 'BadRequest', reasons: ['body is not UTF-8 text: some bytes are no UTF-8 character'] }, contentType)
  }
  t.equal((await get(app, '/v1/events/1', reader)).statusCode, 404, 'nothing stored')
})

t.test('a refusal deep in a deeply nested body names the ends of the path and counts the levels between', async (t) => {
  const { app } = await tracerApp(t)
  const depth = 20_000
  const payload = '{"a":'.repeat(depth) + '{"b":1,"b":2}' + '}'.repeat(depth)
  const response = await app.inject({ method: 'POST', url: '/auth', headers: { 'content-type': 'application/json' }, payload })
  t.strictSame(response.json(), {
    exception: 'BadRequest',
    reasons: [`body.a.a.a.a (${depth + 1 - 10} levels more) .a.a.a.a.a has the member "b" twice: send each member of an object once`]
  })
})
