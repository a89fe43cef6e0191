import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import type { DatatrailRecord, EventRecord, TraceRecord } from '../domain/records.js'
import type { Store } from '../store/port.js'
import type { ImportRecord } from './ndjson-records.js'

export interface ImportCounts {
  events: number
  traces: number
  datatrail: number
  heartbeats: number
  /** Heartbeats whose id was not stored yet (the others are left as they are). */
  newHeartbeats: number
}

export const totalOf = (counts: ImportCounts) => counts.events + counts.traces + counts.datatrail + counts.heartbeats

/** Records collected until `flush` writes them: one call of each bulk method, each one transaction. */
export class ImportBatch {
  readonly written: ImportCounts = { events: 0, traces: 0, datatrail: 0, heartbeats: 0, newHeartbeats: 0 }
  private events: EventRecord[] = []
  private traces: TraceRecord[] = []
  private datatrail: DatatrailRecord[] = []
  private heartbeats: HeartbeatInput[] = []

  constructor(
    private readonly store: Store,
    /** Write time of the heartbeats, s. */
    private readonly now: number
  ) {}

  get size(): number {
    return this.events.length + this.traces.length + this.datatrail.length + this.heartbeats.length
  }

  add(record: ImportRecord): void {
    switch (record.kind) {
      case 'event':
        return void this.events.push(record.event)
      case 'trace':
        return void this.traces.push(record.trace)
      case 'datatrail':
        return void this.datatrail.push(record.item)
      case 'heartbeat':
        return void this.heartbeats.push(record.heartbeat)
    }
  }

  /** Events first: a reader then never sees a trace or heartbeat whose event is still missing. */
  async flush(): Promise<void> {
    const { events, traces, datatrail, heartbeats } = this
    this.events = []
    this.traces = []
    this.datatrail = []
    this.heartbeats = []
    if (events.length > 0) this.written.events += await this.store.events.upsert(events)
    if (traces.length > 0) this.written.traces += await this.store.traces.upsert(traces)
    if (datatrail.length > 0) {
      await this.store.datatrail.put(datatrail)
      this.written.datatrail += datatrail.length
    }
    if (heartbeats.length > 0) {
      this.written.newHeartbeats += await this.store.heartbeats.add(heartbeats, this.now)
      this.written.heartbeats += heartbeats.length
    }
  }
}
