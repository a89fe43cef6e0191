const PAUSE = new Int32Array(new SharedArrayBuffer(4))

/**
 * `open`, tried again while SQLite answers SQLITE_BUSY, for as long as a lock may be waited for
 * (`waitMs`, from the first try). Some of SQLite's answers come at once, without waiting out
 * busy_timeout (another process making a new file's WAL, or recovering it, at the same moment):
 * two instances starting together on one file would otherwise see one of them fail to start.
 * Only a start waits so, before anything is served.
 */
export function throughBusy<T>(open: () => T, waitMs: number): T {
  const giveUpAt = Date.now() + waitMs
  for (;;) {
    try {
      return open()
    } catch (error) {
      if (!String((error as { code?: unknown } | null)?.code).startsWith('SQLITE_BUSY') || Date.now() >= giveUpAt) throw error
      Atomics.wait(PAUSE, 0, 0, 50)
    }
  }
}
