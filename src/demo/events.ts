import type { Actions } from '../../schemas/events.js'
import type { BulkLoad, EventRecord } from '../domain/records.js'
import type { Sites } from '../vocabulary.js'
import { demoLayout, type DemoLayout } from './layout.js'
import { demoDatatrail, demoHeartbeats, demoTrace, type PartsContext } from './parts.js'
import { Fault } from './faults.js'
import { BasebandPlan } from './plan.js'
import { mulberry32, round2, type Random } from './random.js'
import { pickClassification, pickSource } from './sources.js'

const DAY_MS = 86_400_000
const CLASSIFIED_BASEBAND = 0.93
/** How long after the event a classification is made: 5 to 50 minutes. */
const classificationMs = (random: Random) => (5 + random() * 45) * 60_000

/**
 * What one batch writes; the arrays are emptied and refilled for every batch. Its transitions are
 * the history of its traces: each complete key's change from incomplete, when the pipeline made it.
 */
export interface DemoBatch extends BulkLoad {
  /** Events of the batch that ask for baseband data. */
  baseband: number
}

export const emptyBatch = (): DemoBatch => ({ events: [], traces: [], datatrail: [], heartbeats: [], transitions: [], baseband: 0 })

export interface GeneratorOptions {
  events: number
  days: number
  seed: number
  /** The end of the time span, ms since the epoch. */
  now: number
  firstEventNo: number
}

// Most events only have intensity data; sharing these saves an object pair per event (never mutated).
const INTENSITY_GOT: Actions = Object.freeze({ want: { intensity: true }, got: { intensity: true } })
const INTENSITY_LOST: Actions = Object.freeze({ want: { intensity: true }, got: { intensity: false } })

/**
 * Events in event_no order, their times spread evenly over the span and ascending with event_no
 * (as the pipeline numbers them), so the store's time indexes are appended to, not scattered.
 */
export class DemoGenerator {
  private readonly random: Random
  private readonly layout: DemoLayout
  private readonly plan: BasebandPlan
  private readonly start: number
  private readonly step: number
  private readonly nowSec: number
  private index = 0

  constructor(sites: Sites, private readonly options: GeneratorOptions) {
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
    const eventNo = this.options.firstEventNo + this.index
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
