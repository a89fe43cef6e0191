import type { Db } from 'mongodb'
import type { Role } from '../../../schemas/auth.js'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { StoredTrace } from '../../domain/trace.js'
import type {
  CallbackRow,
  EventListQuery,
  EventParts,
  EventPosition,
  NewUser,
  Store,
  StoredDatatrail,
  StoredEvent
} from '../port.js'
import { asStoreError } from './errors.js'
import { MongoEventParts } from './event-parts.js'
import { MongoEvents } from './events.js'
import { ensureIndexes } from './indexes.js'
import { MongoTraces } from './traces.js'
import { MongoUsers } from './users.js'

/**
 * The store on MongoDB, shared by several service instances and the pipeline's own writers. Every
 * write is one atomic single-document operation or one unordered bulk write of idempotent ones;
 * every "database unreachable" error becomes StoreUnavailableError (503), and the driver reconnects
 * by itself, so the service serves again when the database returns.
 */
export class MongoStore implements Store {
  readonly kind = 'mongodb'
  private readonly users: MongoUsers
  private readonly events: MongoEvents
  private readonly traces: MongoTraces
  private readonly parts: MongoEventParts

  private constructor(
    private readonly db: Db,
    private readonly closeConnection: () => Promise<void>
  ) {
    this.users = new MongoUsers(db)
    this.events = new MongoEvents(db)
    this.traces = new MongoTraces(db)
    this.parts = new MongoEventParts(db)
  }

  /** Creates the missing indexes, then serves from `db`; `close` ends its connection. */
  static async open(db: Db, close: () => Promise<void>): Promise<MongoStore> {
    await ensureIndexes(db)
    return new MongoStore(db, close)
  }

  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw asStoreError(error)
    }
  }

  ping = () => this.run(async () => void (await this.db.command({ ping: 1 })))

  close = () => this.closeConnection()

  createUser = (user: NewUser) => this.run(() => this.users.create(user))
  findUser = (name: string) => this.run(() => this.users.find(name))
  listUsers = () => this.run(() => this.users.list())
  countUsers = () => this.run(() => this.users.count())
  setRole = (name: string, role: Role) => this.run(() => this.users.setRole(name, role))
  setPasswordHash = (name: string, hash: string) => this.run(() => this.users.setPasswordHash(name, hash))
  removeUser = (name: string) => this.run(() => this.users.remove(name))
  saveRefreshToken = (name: string, tokenHash: string, expiresAt: number) =>
    this.run(() => this.users.saveRefreshToken(name, tokenHash, expiresAt))

  /** Not one transaction as on SQLite: each replacement is atomic and idempotent, so a retry repairs a partial batch. */
  upsertEvents = (events: StoredEvent[]) => this.run(() => this.events.upsert(events))
  findEvent = (eventNo: number) => this.run(() => this.events.find(eventNo))
  listEvents = (query: EventListQuery) => this.run(() => this.events.list(query))

  async *basebandCallbacks(window: TimeWindow, pageSize: number): AsyncIterable<CallbackRow[]> {
    let after: EventPosition | undefined
    for (;;) {
      const page = await this.run(() => this.events.callbackPage(window, after, pageSize))
      if (page.length > 0) yield page
      if (page.length < pageSize) return
      const last = page[page.length - 1]!.event
      after = { timestamp: last.timestamp, event_no: last.event_no }
    }
  }

  createTrace = (eventNo: number, initial: Record<string, string>, now: number) =>
    this.run(() => this.traces.create(eventNo, initial, now))
  setTraceStatus = (eventNo: number, key: string, status: string, initial: Record<string, string>, now: number) =>
    this.run(() => this.traces.setStatus(eventNo, key, status, initial, now))
  findTrace = (eventNo: number) => this.run(() => this.traces.find(eventNo))
  upsertTraces = (traces: StoredTrace[]) => this.run(() => this.traces.upsert(traces))

  putDatatrail = (items: StoredDatatrail[]) => this.run(() => this.parts.putDatatrail(items))
  addHeartbeats = (heartbeats: HeartbeatInput[], now: number) => this.run(() => this.parts.addHeartbeats(heartbeats, now))

  /** Four indexed lookups at once; not one snapshot as on SQLite: the parts are independent documents. */
  eventParts = (eventNo: number): Promise<EventParts> =>
    this.run(async () => {
      const [event, trace, datatrail, heartbeats] = await Promise.all([
        this.events.find(eventNo),
        this.traces.find(eventNo),
        this.parts.datatrailOf(eventNo),
        this.parts.heartbeatsOf(eventNo)
      ])
      return { event, trace, datatrail, heartbeats }
    })
}
