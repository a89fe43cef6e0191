/**
 * The store is unreachable, locked, or its kept audit kept changing under other writers: 503, not 500.
 * Not in the port, so that the kept audit, below the store, throws what the adapters throw.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}
