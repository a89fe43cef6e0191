// GET /metrics with WORKERS=2: whichever worker holds the scrape, it answers for the whole service.
import { get } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { logLines, request, runCli, startWorkers, waitFor, type WorkersProcess } from './processes.js'

/** A GET on a connection of its own, as a new client (a scraper) would: the kernel picks the worker. */
const onNewConnection = (url: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const sent = get(url, { agent: false, timeout: 10_000 }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    sent.on('timeout', () => sent.destroy(new Error(`no answer from ${url} within 10 s`)))
    sent.on('error', reject)
  })

/** How many requests for `url` each worker (by pid) has logged receiving so far. */
const receivedBy = (server: WorkersProcess, url: string) => {
  const counts = new Map<number, number>()
  for (const line of logLines(server)) {
    if (line.msg !== 'incoming request' || (line.req as { url?: string } | undefined)?.url !== url) continue
    counts.set(line.pid as number, (counts.get(line.pid as number) ?? 0) + 1)
  }
  return counts
}

const total = (counts: Map<number, number>) => [...counts.values()].reduce((sum, count) => sum + count, 0)

/** The value of one series of an exposition, or undefined when it is not there. */
const sample = (exposition: string, series: string) => {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

const HEALTH_COUNT = 'http_request_duration_seconds_count{method="GET",route="/health",status_code="200"}'
const REPAIRS = 'tracer_audit_mismatches_total'

t.test('WORKERS=2: every scrape of /metrics holds the requests and the repairs of both workers', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  // A store made before the start holds no demo: the verifier's passes over it are quick.
  const added = await runCli(['users', 'add', 'admin', '--role', 'admin', '--password-stdin'], { TRACER_DB: db }, 'pw\n')
  t.equal(added.status, 0, added.stderr)
  // Requests are logged at debug: the test reads which worker received each.
  const server = await startWorkers(t, { TRACER_DB: db, WORKERS: '2', LOG_LEVEL: 'debug' })
  const base = server.url

  // /health, each on a new connection, until both workers have answered three or more.
  let healthy = 0
  const bothHold = (counts: Map<number, number>, least: number) => counts.size === 2 && [...counts.values()].every((count) => count >= least)
  while (!bothHold(receivedBy(server, '/health'), 3) && healthy < 200) {
    t.equal((await onNewConnection(`${base}/health`)).status, 200)
    healthy++
    await waitFor(async () => total(receivedBy(server, '/health')) === healthy, 5000)
  }
  const served = receivedBy(server, '/health')
  t.ok(bothHold(served, 3), `both workers answered /health: ${JSON.stringify([...served.values()])}`)

  // A kept audit row made unreadable behind the service's back: one worker's verifier repairs it.
  const token = (await request(`${base}/auth`, { body: { username: 'admin', password: 'pw' } })).body.access_token as string
  const event = { event_no: 77, timestamp_utc: new Date().toISOString(), snr: 12, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } }
  t.equal((await request(`${base}/v1/events`, { token, body: [event] })).status, 200)
  const kept = openKeptDatabase(db)
  try {
    t.equal(kept.prepare(`UPDATE audits SET facts = 'not json' WHERE event_no = 77`).run().changes, 1)
  } finally {
    kept.close()
  }
  // Each scrape waits until its worker's log line is read, so that the counts by worker are whole.
  let scraped = 0
  const scrape = async () => {
    const answer = await onNewConnection(`${base}/metrics`)
    scraped++
    await waitFor(async () => total(receivedBy(server, '/metrics')) === scraped, 5000)
    return answer
  }
  await waitFor(async () => (sample((await scrape()).body, REPAIRS) ?? 0) >= 1, 30_000)

  // Scrapes on new connections until each worker has answered two; every one holds both workers' numbers.
  const scrapes: { health?: number; repairs?: number }[] = []
  const before = receivedBy(server, '/metrics')
  const scrapedSince = () => new Map([...receivedBy(server, '/metrics')].map(([pid, count]) => [pid, count - (before.get(pid) ?? 0)]))
  while (!bothHold(scrapedSince(), 2) && scrapes.length < 100) {
    const { status, body } = await scrape()
    t.equal(status, 200)
    scrapes.push({ health: sample(body, HEALTH_COUNT), repairs: sample(body, REPAIRS) })
  }
  t.ok(bothHold(scrapedSince(), 2), `each worker answered two scrapes or more (${scrapes.length} scrapes)`)
  t.strictSame(
    scrapes.map((scrape) => scrape.health),
    scrapes.map(() => healthy),
    `every scrape counts the ${healthy} /health requests of both workers`
  )
  const repaired = scrapes[0]!.repairs!
  t.ok(repaired >= 1, 'the repair is counted')
  t.strictSame(
    scrapes.map((scrape) => scrape.repairs),
    scrapes.map(() => repaired),
    'and every scrape holds it, whichever worker made it'
  )

  // A worker that cannot answer (stopped): the scrape is refused, not answered with the other's numbers alone.
  const stopped = server.pids[1]!
  t.teardown(() => void process.kill(stopped, 'SIGCONT'))
  process.kill(stopped, 'SIGSTOP')
  const refused = await onNewConnection(`${base}/metrics`)
  t.equal(refused.status, 503, 'refused while a worker does not answer')
  t.match(JSON.parse(refused.body), { exception: 'ServiceUnavailable', reasons: [/^The metrics of every worker could not be collected/] })
  process.kill(stopped, 'SIGCONT')
  const again = await onNewConnection(`${base}/metrics`)
  t.equal(again.status, 200, 'and answered again once it does')
  t.equal(sample(again.body, HEALTH_COUNT), healthy)
})
