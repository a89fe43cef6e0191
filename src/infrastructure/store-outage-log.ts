import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { KeptAuditRebuildingError } from '../kept-audit/rebuild.js'
import { StoreUnavailableError } from '../store/port.js'

const PROBE_INTERVAL_MS = 1000

// A store outage as two log lines, not one a refused request: a full store under load once wrote 19,000 error lines in three seconds.
// It ends when a `ping` succeeds (a readiness probe's, or ours once a second while others succeed): a read-only or full store still reads.
async function storeOutageLog(fastify: FastifyInstance) {
  // The real, monotonic clock: an outage's length is not the routes' (a test may hold their time still).
  const now = () => performance.now()
  const { store, log } = fastify
  let outage: { since: number; refused: number } | undefined
  let probing = false
  let lastProbe = -Infinity
  let closing = false
  fastify.addHook('onClose', async () => void (closing = true))

  const probe = () => {
    if (probing || now() - lastProbe < PROBE_INTERVAL_MS) return
    probing = true
    lastProbe = now()
    // The observer below sees the ping; a failed probe is no operation anyone asked for, so it is not counted.
    store.ping().then(
      () => (probing = false),
      () => {
        probing = false
        if (outage !== undefined) outage.refused--
      }
    )
  }

  store.observe((operation, _seconds, ok, error) => {
    if (closing) return
    // Not an outage: the store serves everything else, and the rebuild's start and end are logged by the server.
    if (error instanceof KeptAuditRebuildingError) return
    if (error instanceof StoreUnavailableError) {
      if (outage !== undefined) return void outage.refused++
      outage = { since: now(), refused: 1 }
      log.error({ operation, reason: error.message }, 'the store is unavailable: what needs it is answered 503 until it is back (its return is logged)')
      return
    }
    if (!ok || outage === undefined) return
    if (operation !== 'ping') return probe()
    const seconds = Math.round((now() - outage.since) / 100) / 10
    log.info({ outageSeconds: seconds, refusedOperations: outage.refused }, `the store is available again, after ${seconds} s`)
    outage = undefined
  })
}

export default fp(storeOutageLog, { name: 'store-outage-log', fastify: '5.x', decorators: { fastify: ['store'] } })
