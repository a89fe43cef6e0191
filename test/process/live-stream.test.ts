import { once } from 'node:events'
import { get, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import type { StreamedTransition } from '../../schemas/history.js'
import { SseClient } from '../sse.js'
import { request, runCli, startServer } from './processes.js'

const STREAMS = 200
const WRITES = 100
/** What the service promises: a transition reaches every stream that wants it within 2 s of its write. */
const DELIVERY_MS = 2000
/** SIGTERM with every stream open: the process is gone within this. */
const EXIT_MS = 5000

/** The filters of the streams, in turn; the last three match none of the 100 writes. */
const FILTERS = ['', '?event_no=1', '?event_no=2', '?site=kko', '?site=chime', '?event_no=3&site=gbo', '?event_no=1&site=kko', '?event_no=777', '?site=hco', '?event_no=777&site=hco']

const SITES = ['chime', 'kko', 'gbo']
const STAGES = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']

interface Write {
  event: number
  site: string
  stage: string
}

/** 100 writes, each a change (a key not written before), at sites chime, kko and gbo and the classification (no site). */
const writes: Write[] = Array.from({ length: 8 }, (_, i) => i + 1)
  .flatMap((event) => [{ event, site: 'kko', stage: 'tsar_classification' }, ...STAGES.flatMap((stage) => SITES.map((site) => ({ event, site, stage })))])
  .slice(0, WRITES)
/** Written last: wanted by the streams that want none of the 100, so that they end up with exactly this one. */
const LAST: Write = { event: 777, site: 'hco', stage: 'baseband_conversion' }

const keyOf = ({ site, stage }: Write) => (stage === 'tsar_classification' ? 'stages/tsar_classification' : `stages/${stage}/sites/${site}`)
const label = (event: number, key: string) => `${event} ${key}`

/** The writes a stream with `filter` should get, in the order written (as the service filters: a key at the site). */
function wantedBy(filter: string, written: Write[]): string[] {
  const params = new URLSearchParams(filter.slice(1))
  const eventNo = params.get('event_no')
  const site = params.get('site')
  return written
    .filter((write) => eventNo === null || write.event === Number(eventNo))
    .filter((write) => site === null || keyOf(write).endsWith(`/sites/${site}`))
    .map((write) => label(write.event, keyOf(write)))
}

/** A stream opened as any HTTP client would, with the token in the Authorization header. */
async function openStream(url: string, token: string) {
  const opening = get(url, { headers: { authorization: token }, agent: false })
  const [response] = (await once(opening, 'response')) as [IncomingMessage]
  const client = new SseClient(response)
  await client.until(() => client.comments.length > 0, 'the stream is open')
  return { status: response.statusCode, client, close: () => opening.destroy() }
}

t.test(`${STREAMS} streams on one instance get each of ${WRITES} transitions written through another within 2 s; SIGTERM ends them all, promptly and cleanly`, async (t) => {
  // One user from one address opens every stream here: its share is the whole bound (fair-shares.test.ts holds a client to its share).
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), MAX_STREAMS_PER_CLIENT: String(STREAMS) }
  // A user before the first start, so that no demo data is seeded: every write below is a change.
  const added = await runCli(['users', 'add', 'pipeline', '--role', 'writer', '--password-stdin'], env, 'pipeline-password\n')
  t.equal(added.status, 0, added.stderr)
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)])
  const login = await request(`${b.url}/auth`, { body: { username: 'pipeline', password: 'pipeline-password' } })
  const token = login.body.access_token as string

  const streams = await Promise.all(
    Array.from({ length: STREAMS }, async (_, i) => {
      const filter = FILTERS[i % FILTERS.length]!
      return { filter, ...(await openStream(`${a.url}/v1/event-tracer/stream${filter}`, token)) }
    })
  )
  t.teardown(() => streams.forEach((stream) => stream.close()))
  t.ok(streams.every((stream) => stream.status === 200), `all ${STREAMS} streams are open on A`)

  for (const write of [...writes, LAST]) {
    const written = await request(`${b.url}/v1/event-tracer/update-trace`, { token, body: { ...write, status: 'complete' } })
    if (written.status !== 200) throw new Error(`update-trace through B answered ${written.status}: ${JSON.stringify(written.body)}`)
  }

  for (const filter of FILTERS) {
    const ofFilter = streams.filter((stream) => stream.filter === filter)
    const wanted = wantedBy(filter, [...writes, LAST])
    const streamsOf = `the ${ofFilter.length} streams ${filter === '' ? 'without a filter' : `with ${filter}`}`
    t.ok(filter.includes('777') || filter.includes('hco') ? wanted.length === 1 : wanted.length > 1, `${streamsOf} want ${wanted.length} of the writes`)
    await Promise.all(ofFilter.map(({ client }) => client.until(() => client.transitions.length >= wanted.length, `${streamsOf} have ${wanted.length} transitions`, 20_000)))
    const got = ofFilter.map(({ client }) => client.transitions.map((transition) => label(transition.event_no, transition.key)))
    t.ok(
      got.every((labels) => JSON.stringify(labels) === JSON.stringify(wanted)),
      `${streamsOf} got exactly those, in the order written`,
      { wanted, got: got.find((labels) => JSON.stringify(labels) !== JSON.stringify(wanted)) }
    )
  }

  const delays = streams.flatMap(({ client }) =>
    client.messages.map((message) => message.arrivedAt - (JSON.parse(message.data) as StreamedTransition).at * 1000)
  )
  const slowest = Math.max(...delays)
  t.ok(slowest <= DELIVERY_MS, `each of ${delays.length} deliveries within ${DELIVERY_MS} ms of its write (slowest ${slowest.toFixed(0)} ms)`)

  const exited = once(a.child, 'exit') as Promise<[number | null, string | null]>
  const signalled = Date.now()
  a.child.kill('SIGTERM')
  const [code, signal] = await exited
  const took = Date.now() - signalled
  t.equal(code, 0, `A exited with status 0 (signal ${signal})`)
  t.ok(took < EXIT_MS, `A exited ${took} ms after SIGTERM with ${STREAMS} streams open, within ${EXIT_MS} ms`)
  const endings = await Promise.all(streams.map(({ client }) => client.ended))
  t.ok(
    endings.every((ending) => ending === 'end'),
    'every stream ended as a complete response, none cut',
    { cut: endings.filter((ending) => ending !== 'end').map(String).slice(0, 3) }
  )
})
