/*
 * A worker of test/service/cluster-metrics.ts: counts `requests` requests of its own in a registry,
 * hands it to the primary as a serving worker does (clusterScrape), and scrapes when told to.
 */
import { Counter, Registry } from 'prom-client'
import { clusterScrape } from '../../src/infrastructure/cluster-metrics.js'

const requests = Number(process.env.TEST_REQUESTS)
const registry = new Registry()
new Counter({ name: 'test_requests_total', help: 'requests this worker served', registers: [registry] }).inc(requests)
const scrape = clusterScrape(registry)
process.on('message', (message: unknown) => {
  if (message !== 'scrape') return
  scrape().then(
    (text) => process.send!({ kind: 'scraped', text }),
    (error: Error) => process.send!({ kind: 'scraped', error: error.message })
  )
})
// The test process ends: so does this worker.
process.on('disconnect', () => process.exit(0))
process.send!({ kind: 'ready' })
