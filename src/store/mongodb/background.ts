import type { Store } from '../port.js'
import { auditOptions, clientOptions, connectClient, realTime, retryWhileUnavailable, SERVE_BACKOFF, type MongoSettings, type OpenTools } from './connect.js'
import { ensureIndexes } from './indexes.js'
import { MongoStore } from './store.js'

/**
 * The store at once, for a server that listens whatever the database does: 503 while the connection is made in the
 * background, retried while the database is unreachable. `connected` resolves once it serves and `prepare` (start-up
 * work that needs it) is done, or once closed first; it rejects only with what waiting cannot fix. Closing stops it.
 */
export function connectInBackground(
  settings: MongoSettings,
  tools: OpenTools & { prepare?: (store: Store) => Promise<void> }
): { store: Store; connected: Promise<void> } {
  const { connect = connectClient, backoff = SERVE_BACKOFF, prepare = async () => {}, ...rest } = tools
  const stopping = new AbortController()
  const { signal } = stopping
  const adapter = MongoStore.connecting(settings.sites, () => stopping.abort(), auditOptions(settings, rest.log))
  const attempt = async () => {
    const connection = await connect(settings.url, clientOptions(settings.url), signal)
    try {
      const db = connection.db(settings.dbName)
      await ensureIndexes(db)
      signal.throwIfAborted()
      // Resolves once the kept audit agrees with the configuration: the store answers 503 until then.
      await adapter.serve(db, () => connection.close())
    } catch (error) {
      await connection.close().catch(() => {})
      throw error
    }
  }
  const retrying = { ...realTime, ...rest }
  const connected = (async () => {
    await retryWhileUnavailable(attempt, backoff, retrying, signal)
    // The database may go away again just after: the start-up work waits for it the same way.
    await retryWhileUnavailable(() => prepare(adapter.store), backoff, retrying, signal)
  })().catch((error: unknown) => {
    if (!signal.aborted) throw error
  })
  return { store: adapter.store, connected }
}
