import { join } from 'node:path'
import t, { type Test } from 'tap'
import { stalledGet, untilTrue, type StalledResponse } from '../raw-http.js'
import { request, runCli, startServer, type ServerProcess } from './processes.js'

/*
 * No client holds what the others need: one user (or one address) opening many responses that it
 * never reads keeps at most its share of them. Whether the pipeline's writes keep their pace while
 * the live streams are all in use is a rate, measured by the bench (bench/fair-shares.ts, issue 28).
 */

// Seeding a year of 150,000 events takes most of a minute on a quiet 2-core machine.
t.setTimeout(240_000)

const DAY = 86_400_000
const PASSWORD = 'a-password'

/**
 * A year of 150,000 events: its audit (about 10 MB) and its baseband callbacks (about 29 MB) are
 * far more than the buffers of a loopback connection whose client does not read hold (about 4 MB),
 * so such a client stalls its response.
 */
async function yearServer(t: Test, users: string[], env: Record<string, string> = {}, events = 150_000) {
  // Every login of the test comes from one address.
  const base = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), AUTH_ADDRESS_RATE_LIMIT: '100', ...env }
  const seeded = await runCli(['seed', '--demo', '--events', String(events), '--days', '365'], base)
  t.equal(seeded.status, 0, seeded.stderr)
  for (const user of users) {
    const added = await runCli(['users', 'add', user, '--role', 'writer', '--password-stdin'], base, `${PASSWORD}\n`)
    t.equal(added.status, 0, added.stderr)
  }
  const server = await startServer(t, base)
  const tokens: Record<string, string> = {}
  for (const user of users) tokens[user] = (await request(`${server.url}/auth`, { body: { username: user, password: PASSWORD } })).body.access_token as string
  return { server, tokens, port: Number(new URL(server.url).port) }
}

const window = (days: number) => {
  const now = Date.now()
  return `start_time_utc=${new Date(now - days * DAY).toISOString()}&end_time_utc=${new Date(now).toISOString()}`
}

/** A GET from another loopback address, read whole. */
async function getFrom(server: ServerProcess, path: string, token: string, from: string) {
  const { request: get } = await import('node:http')
  const { port } = new URL(server.url)
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, headers: { authorization: token }, localAddress: from }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, body }))
    })
      .on('error', reject)
      .end()
  })
}

const statuses = (responses: StalledResponse[]) => responses.map((response) => response.status)
const closeAll = (responses: StalledResponse[]) => responses.forEach((response) => response.socket.destroy())

t.test('32 year-long audits that are never read hold one client’s share of the slots; another user still gets answers', async (t) => {
  const { server, tokens, port } = await yearServer(t, ['hog', 'hog2', 'hog3', 'hog4', 'operator'])
  const year = `/v1/event-tracer/audit?${window(365)}`
  const hogged = await Promise.all(Array.from({ length: 32 }, () => stalledGet(port, year, tokens.hog!, { from: '127.0.0.2' })))
  t.teardown(() => closeAll(hogged))
  t.equal(statuses(hogged).filter((status) => status === 200).length, 8, 'eight stream: the share of one user')
  const refused = hogged.filter((response) => response.status === 429)
  t.equal(refused.length, 24, 'the others are refused with 429')
  t.ok(refused.every((response) => response.headers['retry-after'] === '2'), 'each saying when to retry')

  // Another user, from another address: answered, whole.
  for (const path of [`/v1/event-tracer/audit?${window(1)}`, `/v1/event-tracer/baseband-callbacks?${window(1)}`, `/v1/event-tracer/stage-latency?${window(1)}`]) {
    const answer = await getFrom(server, path, tokens.operator!, '127.0.0.3')
    t.equal(answer.status, 200, path)
    t.doesNotThrow(() => JSON.parse(answer.body), 'a whole JSON document')
  }
  t.equal((await getFrom(server, '/dashboard/', tokens.operator!, '127.0.0.3')).status, 200, 'and the dashboard')

  // Another user from the hog's address has a share of its own: one user cannot use up the
  // address it shares (an address holds twice a user's share; test/tracer/fair-reads.ts holds the
  // address to it).
  const sameAddress = await Promise.all(Array.from({ length: 8 }, () => stalledGet(port, year, tokens.hog2!, { from: '127.0.0.2' })))
  t.teardown(() => closeAll(sameAddress))
  t.strictSame(statuses(sameAddress), Array(8).fill(200), 'another user behind the hog’s address opens its own share')

  // Two more users from two more addresses fill the instance with responses they never read (a
  // year of baseband callbacks: quick to make, so the buffers fill at once): a slot stays within
  // reach of a client that reads, as soon as one of them has stalled a while.
  const callbacks = `/v1/event-tracer/baseband-callbacks?${window(365)}`
  const filling = (
    await Promise.all(
      ['hog3', 'hog4'].flatMap((user, i) => Array.from({ length: 8 }, () => stalledGet(port, callbacks, tokens[user]!, { from: `127.0.0.${4 + i}` })))
    )
  ).filter((response) => response.status === 200)
  t.teardown(() => closeAll(filling))
  t.equal(filling.length, 16, 'every slot of the instance is held by clients that do not read')
  let answered = 0
  await untilTrue(
    async () => {
      answered = (await getFrom(server, `/v1/event-tracer/audit?${window(1)}`, tokens.operator!, '127.0.0.3')).status
      return answered === 200
    },
    'a client that reads is answered',
    40_000
  )
  t.equal(answered, 200)
  t.ok(server.output.some((line) => line.includes('another request needed its slot')), 'a stalled response gave its slot up, as the log says')
})

t.test('one user holds at most its share of the live streams; another user still opens one', async (t) => {
  const { server, tokens } = await yearServer(t, ['watcher', 'operator'], {}, 1000)
  const port = Number(new URL(server.url).port)
  // Open streams that take their headers and nothing more: what counts is that each holds its place.
  const streams = await Promise.all(Array.from({ length: 100 }, () => stalledGet(port, '/v1/event-tracer/stream', tokens.watcher!, { from: '127.0.0.2' })))
  t.teardown(() => closeAll(streams))
  t.equal(statuses(streams).filter((status) => status === 200).length, 100, 'the user opens its share, 100')
  const more = await getFromHeaders(server, '/v1/event-tracer/stream', tokens.watcher!, '127.0.0.2')
  t.equal(more.status, 429, 'the 101st of one user is refused')
  t.equal(more.retryAfter, '2')
  const other = await getFromHeaders(server, '/v1/event-tracer/stream', tokens.operator!, '127.0.0.3')
  t.equal(other.status, 200, 'another user opens one')
})

/** The status and Retry-After of a GET from another loopback address, without reading its body. */
async function getFromHeaders(server: ServerProcess, path: string, token: string, from: string) {
  const response = await stalledGet(Number(new URL(server.url).port), path, token, { from })
  response.socket.destroy()
  return { status: response.status, retryAfter: response.headers['retry-after'] }
}
