import type { LockWaits } from './lock-waits.js'
import { KEPT_AUDIT_MADE, KeptAuditRebuildingError, type KeptAuditState } from '../kept-audit/rebuild.js'
import type { Store, StoreObserver } from './port.js'

/** A port interface as an adapter may implement it: SQLite answers at once, MongoDB with promises. */
export type Adapter<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R | Promise<R> : never
}

const COLLECTIONS = ['users', 'events', 'traces', 'datatrail', 'heartbeats', 'views', 'transitions', 'audits', 'verdictChanges', 'firstStart'] as const
type CollectionName = (typeof COLLECTIONS)[number]

export type AdapterCollections = { [K in CollectionName]: Adapter<Store[K]> }

export interface StoreAdapter {
  readonly kind: Store['kind']
  /** The collections to use now: SQLite makes new ones when it reopens; MongoDB throws StoreUnavailableError until connected. */
  collections(): AdapterCollections
  ping(): unknown
  close(): Promise<void>
  /** The adapter's "cannot be used now" errors as StoreUnavailableError; others as they are. */
  mapError(error: unknown): unknown
}

/** The port over an adapter: a wrapper made for each method on first use maps errors and reports the operation. */
export function guardedStore(adapter: StoreAdapter, locks?: LockWaits, keptAudit: KeptAuditState = KEPT_AUDIT_MADE): Store {
  const observers: StoreObserver[] = []

  /** An operation; one that finds another process's lock waits it out (lock-waits.ts), unless it is the readiness probe. */
  const run = async <T>(operation: string, work: () => T | Promise<T>, waitForLocks = true): Promise<T> => {
    const started = observers.length === 0 ? 0 : performance.now()
    let failure: { error: unknown } | undefined
    try {
      try {
        return await work()
      } catch (error) {
        if (locks === undefined || !waitForLocks || !locks.isLocked(error)) throw error
        return await locks.retry(work, error)
      }
    } catch (error) {
      failure = { error: adapter.mapError(error) }
      throw failure.error
    } finally {
      for (const observer of observers) observer(operation, (performance.now() - started) / 1000, failure === undefined, failure?.error)
    }
  }

  // What reads the kept audit or its verdict changes waits until it is made: a half-made audit would answer wrongly.
  const readsKeptAudit = (name: CollectionName) => name === 'audits' || name === 'verdictChanges'

  const guarded = <K extends CollectionName>(name: K): Store[K] => {
    const gated = readsKeptAudit(name)
    const wrappers = new Map<string, (...args: unknown[]) => Promise<unknown>>()
    return new Proxy({} as Store[K], {
      get(_target, method) {
        if (typeof method !== 'string') return undefined
        let wrapper = wrappers.get(method)
        if (wrapper === undefined) {
          const operation = `${name}.${method}`
          wrapper = (...args) =>
            run(operation, () => {
              const progress = gated ? keptAudit.rebuilding() : null
              if (progress !== null) throw new KeptAuditRebuildingError(progress)
              const collection = adapter.collections()[name] as unknown as Record<string, (...args: unknown[]) => unknown>
              return collection[method]!(...args)
            })
          wrappers.set(method, wrapper)
        }
        return wrapper
      }
    })
  }

  return {
    kind: adapter.kind,
    ...(Object.fromEntries(COLLECTIONS.map((name) => [name, guarded(name)])) as { [K in CollectionName]: Store[K] }),
    keptAudit,
    // /ready answers at once: a store another process holds locked is not ready to write now.
    ping: () => run('ping', () => adapter.ping(), false).then(() => undefined),
    // Operations waiting for another process's lock end first: a write in flight when a server stops still lands.
    close: async () => {
      await locks?.settled()
      return adapter.close()
    },
    observe: (observer) => void observers.push(observer)
  }
}
