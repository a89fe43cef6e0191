import type { Actions } from '../../schemas/events.js'
import type { BulkLoad, EventRecord } from '../domain/records.js'
import type { Store } from '../store/port.js'
import type { Sites } from '../vocabulary.js'
import { demoDatatrail, demoHeartbeats, demoLayout, demoTrace, HEARTBEAT_IDS_PER_EVENT, type DemoLayout, type PartsContext } from './parts.js'
import { BasebandPlan, Fault } from './plan.js'
import { mulberry32, round2, type Random } from './random.js'
import { pickClassification, pickSource } from './sources.js'

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

/** What one batch writes, its arrays emptied and refilled for every batch; its transitions are its traces' history. */
interface DemoBatch extends BulkLoad {
  /** Events of the batch that ask for baseband data. */
  baseband: number
}

const emptyBatch = (): DemoBatch => ({ events: [], traces: [], datatrail: [], heartbeats: [], transitions: [], baseband: 0 })

/**
 * Writes a deterministic synthetic data set: the same seed, sites and `now` give the same data.
 * Each bulk method of the port is called once per batch (each one transaction): memory stays flat.
 */
export async function seedDemo(store: Store, sites: Sites, options: SeedOptions): Promise<SeedCounts> {
  const generator = new DemoGenerator(sites, options)
  const batch = emptyBatch()
  const counts: SeedCounts = { events: 0, basebandEvents: 0, traces: 0, datatrail: 0, heartbeats: 0 }
  const nowSec = options.now / 1000
  while (generator.remaining > 0) {
    generator.next(options.batchSize ?? 5000, batch)
    // Each event after its other records: its kept audit row is then made once from all of them, not
    // again with each record. Nobody reads a demo store while it is seeded.
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

/** The whole data set as one batch, for a server's first start (FirstStart.seedDemo, one transaction): all in memory, so keep it small. */
export function demoBatch(sites: Sites, options: Omit<SeedOptions, 'batchSize' | 'onProgress'>): DemoBatch {
  const batch = emptyBatch()
  new DemoGenerator(sites, options).next(options.events, batch)
  return batch
}

function checkOptions(sites: Sites, options: SeedOptions, firstEventNo: number): void {
  if (sites.names.length < 1 || sites.names.length > HEARTBEAT_IDS_PER_EVENT) {
    throw new SeedOptionsError(`from 1 to ${HEARTBEAT_IDS_PER_EVENT} sites are supported`)
  }
  if (!Number.isSafeInteger(options.events) || options.events < 1) throw new SeedOptionsError('the number of events must be a positive integer')
  if (!(options.days > 0 && Number.isFinite(options.days))) throw new SeedOptionsError('the number of days must be positive')
  if (options.now - options.days * DAY_MS < 0) throw new SeedOptionsError('the events would start before 1970: ask for fewer days')
  if (!Number.isSafeInteger(firstEventNo) || firstEventNo < 0) throw new SeedOptionsError('the first event_no must be an integer of 0 or more')
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

const DAY_MS = 86_400_000
const CLASSIFIED_BASEBAND = 0.93
/** How long after the event a classification is made: 5 to 50 minutes. */
const classificationMs = (random: Random) => (5 + random() * 45) * 60_000

// Most events only have intensity data; sharing these saves an object pair per event (never mutated).
const INTENSITY_GOT: Actions = Object.freeze({ want: { intensity: true }, got: { intensity: true } })
const INTENSITY_LOST: Actions = Object.freeze({ want: { intensity: true }, got: { intensity: false } })

/** Events in event_no order, their times spread evenly and ascending with it (as the pipeline's): time indexes are appended to. */
class DemoGenerator {
  private readonly random: Random
  private readonly layout: DemoLayout
  private readonly plan: BasebandPlan
  private readonly firstEventNo: number
  private readonly start: number
  private readonly step: number
  private readonly nowSec: number
  private index = 0

  constructor(
    sites: Sites,
    private readonly options: SeedOptions
  ) {
    this.firstEventNo = options.firstEventNo ?? 1
    checkOptions(sites, options, this.firstEventNo)
    this.random = mulberry32(options.seed)
    this.layout = demoLayout(sites)
    this.plan = new BasebandPlan(sites.names.length)
    this.start = options.now - options.days * DAY_MS
    this.step = (options.days * DAY_MS) / options.events
    this.nowSec = options.now / 1000
  }

  get remaining(): number {
    return this.options.events - this.index
  }

  /** Refills `batch` with the next `count` events (fewer at the end) and their parts. */
  next(count: number, batch: DemoBatch): void {
    batch.events.length = batch.traces.length = batch.datatrail.length = batch.heartbeats.length = batch.transitions.length = 0
    batch.baseband = 0
    const end = Math.min(this.index + count, this.options.events)
    for (; this.index < end; this.index++) this.event(batch)
  }

  private event(batch: DemoBatch): void {
    const random = this.random
    const eventNo = this.firstEventNo + this.index
    const timestamp = Math.floor(this.start + (this.index + random()) * this.step)
    const source = pickSource(random)
    // Pareto tail above the detection threshold of 8: most events are faint, a few very bright.
    const snr = round2(Math.min(8 * (1 - random()) ** (-1 / 1.5), 10_000))
    const dm = random() < 0.06 ? null : source.dm(random)
    const baseband = random() < source.baseband
    // Baseband events are the ones people look at, so most of them get classified, within the hour.
    const getsClassified = random() < (baseband ? CLASSIFIED_BASEBAND : 0.2)
    const classifiedAfter = getsClassified ? classificationMs(random) : Number.POSITIVE_INFINITY
    const classified = classifiedAfter <= this.options.now - timestamp
    const event: EventRecord = {
      event_no: eventNo,
      timestamp,
      snr,
      dm,
      known_source_name: source.name,
      tsar_classification: classified ? pickClassification(random).name : null,
      actions: random() < 0.97 ? INTENSITY_GOT : INTENSITY_LOST,
      baseband_requested: baseband,
      update_timestamp: Math.min(timestamp / 1000 + 5, this.nowSec)
    }
    batch.events.push(event)
    if (!baseband) return

    batch.baseband++
    const plan = this.plan.draw(random, this.options.now - timestamp, classified)
    // The classifier's update-trace creates the trace: an event the trace was never created for
    // was not classified (a lost update is a fault of its own, Fault.classificationLost).
    if (!plan.hasTrace) event.tsar_classification = null
    event.actions = this.basebandActions(event.actions.got.intensity === true)
    const context: PartsContext = { layout: this.layout, plan, random, eventNo, timestamp, classifiedAfter: classified ? classifiedAfter : Number.POSITIVE_INFINITY, nowSec: this.nowSec }
    if (plan.hasTrace) batch.traces.push(demoTrace(context, batch.transitions))
    demoDatatrail(context, new Date(timestamp).toISOString().slice(0, 10), batch.datatrail)
    demoHeartbeats(context, batch.heartbeats)
  }

  /** Asked for at the sites of the plan; got where the trace says the data was converted. */
  private basebandActions(gotIntensity: boolean): Actions {
    const want: Record<string, boolean> = { intensity: true }
    const got: Record<string, boolean> = { intensity: gotIntensity }
    const plan = this.plan
    for (let site = 0; site < this.layout.sites.length; site++) {
      if (!plan.requested(site)) continue
      const member = this.layout.members[site]!
      want[member] = true
      got[member] = plan.converted(site) !== (plan.fault[site] === Fault.got)
    }
    return { want, got }
  }
}
