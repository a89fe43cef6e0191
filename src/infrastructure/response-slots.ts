/**
 * A bound on the responses of one kind that may be in flight in this process at once. A slot is
 * taken before the status is sent and given back exactly once, however the response ends.
 */
export class ResponseSlots {
  #taken = 0

  constructor(
    /** What the slots are for, in the plural, as a refusal names them: `responses`, `live streams`. */
    readonly name: string,
    readonly limit: number
  ) {}

  get taken(): number {
    return this.#taken
  }

  /** A function that gives the slot back (calling it again does nothing), or null when all are taken. */
  take(): (() => void) | null {
    if (this.#taken >= this.limit) return null
    this.#taken += 1
    let held = true
    return () => {
      if (!held) return
      held = false
      this.#taken -= 1
    }
  }
}
