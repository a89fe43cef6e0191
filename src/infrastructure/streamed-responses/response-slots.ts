/** Who holds a slot: the user of the request's token, and the client address (request.ip). */
export interface SlotHolder {
  user: string
  address: string
}

/** Why no slot was given: every one is taken, or the holder's user or address has its share already. */
export type SlotRefusal = 'full' | 'user' | 'address'

export type SlotTaken = { release: () => void } | { refused: SlotRefusal }

/**
 * A bound on the responses of one kind that may be in flight in this process at once, and on the
 * share of them one user, and one client address, may hold: a client that opens many and never
 * reads keeps at most its share from everyone else. An address's share is twice a user's (within
 * the bound), so that one user cannot use up the address it shares with others (a control room
 * behind one NAT or proxy), while many users behind one address still cannot take the instance.
 * A slot is taken before the status is sent and given back exactly once, however the response ends.
 */
export class ResponseSlots {
  #taken = 0
  readonly #byUser = new Map<string, number>()
  readonly #byAddress = new Map<string, number>()

  constructor(
    /** What the slots are for, in the plural, as a refusal names them: `responses`, `live streams`. */
    readonly name: string,
    readonly limit: number,
    /** The most one user may hold at once. */
    readonly share: number,
    /** The most one address may hold at once, whatever its users. */
    readonly addressShare: number = Math.min(limit, 2 * share)
  ) {}

  get taken(): number {
    return this.#taken
  }

  /** The slots `holder`'s user holds now. */
  heldBy(holder: SlotHolder): { user: number; address: number } {
    return { user: this.#byUser.get(holder.user) ?? 0, address: this.#byAddress.get(holder.address) ?? 0 }
  }

  /** Whether the holder's user or address holds its share; `false` while it may take another. */
  atShare(holder: SlotHolder): Exclude<SlotRefusal, 'full'> | false {
    const held = this.heldBy(holder)
    if (held.user >= this.share) return 'user'
    return held.address >= this.addressShare ? 'address' : false
  }

  /**
   * A slot for `holder`, with the function that gives it back (calling it again does nothing), or
   * why none: a full instance first, as that is what every client meets alike.
   */
  take(holder: SlotHolder): SlotTaken {
    if (this.#taken >= this.limit) return { refused: 'full' }
    const atShare = this.atShare(holder)
    if (atShare !== false) return { refused: atShare }
    this.#taken += 1
    count(this.#byUser, holder.user, 1)
    count(this.#byAddress, holder.address, 1)
    let holding = true
    return {
      release: () => {
        if (!holding) return
        holding = false
        this.#taken -= 1
        count(this.#byUser, holder.user, -1)
        count(this.#byAddress, holder.address, -1)
      }
    }
  }
}

/** Adds `by` to the count of `key`, forgetting keys that reach 0 (the maps hold only holders). */
function count(counts: Map<string, number>, key: string, by: number) {
  const next = (counts.get(key) ?? 0) + by
  if (next === 0) counts.delete(key)
  else counts.set(key, next)
}
