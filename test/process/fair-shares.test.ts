import autocannon from 'autocannon'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { stalledGet, untilTrue, type StalledResponse } from '../raw-http.js'
import { request, runCli, startServer, type ServerProcess } from './processes.js'

/*
 * No client holds what the others need: one user (or one address) opening many responses that it
 * never reads keeps at most its share of them, and the pipeline's writes keep their pace while the
 * live streams are all in use.
 */

// Seeding a year of events and measuring write rates take most of a minute on a quiet 2-core
// machine: past the runner's default minute on a busy one (CI timed this file out at 60 s).
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

  // Another user from the hog's address meets the address's share.
  const sameAddress = await stalledGet(port, year, tokens.hog2!, { from: '127.0.0.2' })
  t.teardown(() => sameAddress.socket.destroy())
  t.equal(sameAddress.status, 429, 'an address holds its share, whatever users it has')

  // Three more users from three more addresses fill the instance with responses they never read (a
  // year of baseband callbacks: quick to make, so the buffers fill at once): a slot stays within
  // reach of a client that reads, as soon as one of them has stalled a while.
  const callbacks = `/v1/event-tracer/baseband-callbacks?${window(365)}`
  const filling = (
    await Promise.all(
      ['hog2', 'hog3', 'hog4'].flatMap((user, i) => Array.from({ length: 8 }, () => stalledGet(port, callbacks, tokens[user]!, { from: `127.0.0.${4 + i}` })))
    )
  ).filter((response) => response.status === 200)
  t.teardown(() => closeAll(filling))
  t.equal(filling.length, 24, 'every slot of the instance is held by clients that do not read')
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

/** Starts the readers' process with `clients`; resolves once every stream is open. */
async function openStreams(t: Test, url: string, clients: { token: string; address: string; paths: string[] }[]) {
  const readers = spawn(process.execPath, ['dist/test/process/stream-readers.js', url, JSON.stringify(clients)], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => void readers.kill('SIGKILL'))
  let said = ''
  await new Promise<void>((resolve, reject) => {
    readers.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString()
      if (said.includes('open\n')) resolve()
      if (/refused|error/.test(said)) reject(new Error(`the streams did not open: ${said}`))
    })
  })
  return async () => {
    readers.stdin.end()
    await once(readers, 'exit')
    return Number(/read (\d+)/.exec(said)?.[1] ?? 0)
  }
}

/** update-trace for `seconds` at 10 connections: each request flips a key, so each makes a transition. */
async function writeRate(url: string, token: string, seconds: number): Promise<number> {
  const headers = { authorization: token, 'content-type': 'application/json' }
  const requests = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].flatMap((i) =>
    ['complete', 'incomplete'].map((status) => ({
      method: 'POST' as const,
      path: '/v1/event-tracer/update-trace',
      headers,
      body: JSON.stringify({ event: 900_000 + i, site: 'kko', stage: 'baseband_conversion', status })
    }))
  )
  const result = await autocannon({ url, connections: 10, duration: seconds, requests })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`update-trace failed: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.total / seconds
}

t.test('one user holds at most its share of the live streams; another user still opens one', async (t) => {
  const { server, tokens } = await yearServer(t, ['watcher', 'operator'], {}, 1000)
  const streams = await openStreams(t, server.url, [{ token: tokens.watcher!, address: '127.0.0.2', paths: Array.from({ length: 100 }, () => '/v1/event-tracer/stream') }])
  const more = await getFromHeaders(server, '/v1/event-tracer/stream', tokens.watcher!, '127.0.0.2')
  t.equal(more.status, 429, 'the 101st of one user is refused')
  t.equal(more.retryAfter, '2')
  const other = await getFromHeaders(server, '/v1/event-tracer/stream', tokens.operator!, '127.0.0.3')
  t.equal(other.status, 200, 'another user opens one')
  await streams()
})

/** The status and Retry-After of a GET from another loopback address, without reading its body. */
async function getFromHeaders(server: ServerProcess, path: string, token: string, from: string) {
  const response = await stalledGet(Number(new URL(server.url).port), path, token, { from })
  response.socket.destroy()
  return { status: response.status, retryAfter: response.headers['retry-after'] }
}

t.test('update-trace keeps at least half its rate while MAX_STREAMS live streams read what they are sent', async (t) => {
  const users = Array.from({ length: 10 }, (_, i) => `watcher${i}`)
  const { server, tokens } = await yearServer(t, [...users, 'pipeline'], {}, 1000)
  const writer = tokens.pipeline!
  await writeRate(server.url, writer, 2) // warms the service up

  // Each of ten users, from an address of its own, holds its share of 100 streams: ten follow every
  // transition (a dashboard), thirty one site, sixty one event, as operators and monitors do.
  const sites = ['chime', 'kko', 'gbo', 'hco']
  const clients = users.map((user, u) => ({
    token: tokens[user]!,
    address: `127.0.0.${2 + u}`,
    paths: Array.from({ length: 100 }, (_, i) =>
      i < 10 ? '/v1/event-tracer/stream' : i < 40 ? `/v1/event-tracer/stream?site=${sites[i % 4]}` : `/v1/event-tracer/stream?event_no=${900_000 + (i % 16)}`
    )
  }))
  // Three rounds of the rate alone, then beside the streams, and the median of their ratios: tap runs
  // other test files beside this one, and a single pair of measurements takes their load as the streams' cost.
  const rounds: { alone: number; withStreams: number }[] = []
  let read = 0
  for (let round = 0; round < 3; round++) {
    const alone = await writeRate(server.url, writer, 2)
    const closeStreams = await openStreams(t, server.url, clients)
    const withStreams = await writeRate(server.url, writer, 2)
    read += await closeStreams()
    rounds.push({ alone, withStreams })
  }
  const ratios = rounds.map(({ alone, withStreams }) => withStreams / alone).sort((a, b) => a - b)
  const ratio = ratios[1]!
  t.comment(`update-trace alone and beside 1000 streams that read ${(read / 1e6).toFixed(0)} MB: ${rounds.map(({ alone, withStreams }) => `${alone.toFixed(0)}/s and ${withStreams.toFixed(0)}/s`).join('; ')}`)
  t.ok(read > 0, 'the streams were sent what they follow')
  t.ok(ratio >= 0.5, `the writes kept ${(ratio * 100).toFixed(0)}% of their rate (the median of three rounds)`)
})
