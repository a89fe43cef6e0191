/**
 * The store cannot be reached, is locked, or its kept audit kept changing under other writers: the
 * request may succeed later (503, not 500). Apart from the port so that the kept audit's room,
 * below the store, throws the same error the adapters do.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}
