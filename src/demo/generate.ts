import type { Store } from '../store/port.js'
import type { Sites } from '../vocabulary.js'
import { DemoGenerator, emptyBatch, type DemoBatch } from './events.js'
import { HEARTBEAT_IDS_PER_EVENT } from './layout.js'

export interface SeedOptions {
  events: number
  /** The events are spread over this many days ending at `now`. */
  days: number
  seed: number
  /** ms since the epoch; also the write time of the heartbeats. */
  now: number
  /** event_no of the first event; the others count up from it. Default 1. */
  firstEventNo?: number
  /** Events generated and written per round of bulk writes. Default 5000. */
  batchSize?: number
  onProgress?: (written: number, total: number) => void
}

export interface SeedCounts {
  events: number
  basebandEvents: number
  traces: number
  datatrail: number
  /** Heartbeats new to the store (an id stored already is left as it is). */
  heartbeats: number
}

/** Options seedDemo cannot honour; the message is fit for the user. */
export class SeedOptionsError extends RangeError {
  override name = 'SeedOptionsError'
}

/**
 * Writes a deterministic synthetic data set: the same seed, sites and `now` give the same data.
 * Batch by batch, each bulk method of the port called once per batch (each one transaction), so
 * memory stays flat however many events are asked for.
 */
export async function seedDemo(store: Store, sites: Sites, options: SeedOptions): Promise<SeedCounts> {
  const firstEventNo = options.firstEventNo ?? 1
  const batchSize = options.batchSize ?? 5000
  checkOptions(sites, options, firstEventNo)
  const generator = new DemoGenerator(sites, { ...options, firstEventNo })
  const batch = emptyBatch()
  const counts: SeedCounts = { events: 0, basebandEvents: 0, traces: 0, datatrail: 0, heartbeats: 0 }
  const nowSec = options.now / 1000
  while (generator.remaining > 0) {
    generator.next(batchSize, batch)
    // Each event last, after its other records: the kept audit (a row per event asking for baseband
    // data) is then made once per event from all its records, instead of once and then again with
    // each record. Nobody reads a demo store while it is seeded.
    if (batch.traces.length > 0) counts.traces += await store.traces.upsert(batch.traces)
    if (batch.datatrail.length > 0) {
      await store.datatrail.put(batch.datatrail)
      counts.datatrail += batch.datatrail.length
    }
    if (batch.heartbeats.length > 0) counts.heartbeats += await store.heartbeats.add(batch.heartbeats, nowSec)
    if (batch.transitions.length > 0) await store.traces.record(batch.transitions)
    counts.events += await store.events.upsert(batch.events)
    counts.basebandEvents += batch.baseband
    options.onProgress?.(counts.events, options.events)
  }
  return counts
}

/**
 * The whole data set as one batch, for a store that takes it in one transaction (a server's first
 * start: see FirstStart.seedDemo). Meant for small sets: it is all in memory at once.
 */
export function demoBatch(sites: Sites, options: Omit<SeedOptions, 'batchSize' | 'onProgress'>): DemoBatch {
  const firstEventNo = options.firstEventNo ?? 1
  checkOptions(sites, options, firstEventNo)
  const batch = emptyBatch()
  new DemoGenerator(sites, { ...options, firstEventNo }).next(options.events, batch)
  return batch
}

function checkOptions(sites: Sites, options: SeedOptions, firstEventNo: number): void {
  if (sites.names.length < 1 || sites.names.length > HEARTBEAT_IDS_PER_EVENT) {
    throw new SeedOptionsError(`from 1 to ${HEARTBEAT_IDS_PER_EVENT} sites are supported`)
  }
  if (!Number.isSafeInteger(options.events) || options.events < 1) {
    throw new SeedOptionsError('the number of events must be a positive integer')
  }
  if (!(options.days > 0 && Number.isFinite(options.days))) throw new SeedOptionsError('the number of days must be positive')
  if (options.now - options.days * 86_400_000 < 0) {
    throw new SeedOptionsError('the events would start before 1970: ask for fewer days')
  }
  if (!Number.isSafeInteger(firstEventNo) || firstEventNo < 0) {
    throw new SeedOptionsError('the first event_no must be an integer of 0 or more')
  }
  // Heartbeat ids are derived from event numbers and must stay exact integers too.
  const lastHeartbeatId = (firstEventNo + options.events) * HEARTBEAT_IDS_PER_EVENT
  if (!Number.isSafeInteger(lastHeartbeatId)) {
    const largest = Math.floor(Number.MAX_SAFE_INTEGER / HEARTBEAT_IDS_PER_EVENT) - 1
    throw new SeedOptionsError(`event numbers above ${largest} are not supported`)
  }
  if (options.batchSize !== undefined && (!Number.isSafeInteger(options.batchSize) || options.batchSize < 1)) {
    throw new SeedOptionsError('the batch size must be a positive integer')
  }
}
