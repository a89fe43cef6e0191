export interface SlotHolder {
  user: string
  address: string
}

export type SlotRefusal = 'full' | 'user' | 'address'

export type SlotTaken = { release: () => void } | { refused: SlotRefusal }

// Bounds the responses of one kind in flight, and each user's and address's share. An address's is twice a user's: one user cannot use up
// an address shared with others (a control room behind one NAT), while many users behind one still cannot take the instance.
export class ResponseSlots {
  #taken = 0
  readonly #byUser = new Map<string, number>()
  readonly #byAddress = new Map<string, number>()

  constructor(
    /** What the slots are for, in the plural, as a refusal names them: `responses`, `live streams`. */
    readonly name: string,
    readonly limit: number,
    readonly share: number,
    readonly addressShare: number = Math.min(limit, 2 * share)
  ) {}

  get taken(): number {
    return this.#taken
  }

  /** Whether the holder's user or address holds its share; `false` while it may take another. */
  atShare(holder: SlotHolder): Exclude<SlotRefusal, 'full'> | false {
    if ((this.#byUser.get(holder.user) ?? 0) >= this.share) return 'user'
    return (this.#byAddress.get(holder.address) ?? 0) >= this.addressShare ? 'address' : false
  }

  /** A slot and what gives it back (once), or why none: a full instance first, as every client meets it alike. */
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

/** Forgets keys that reach 0: the maps hold only holders. */
function count(counts: Map<string, number>, key: string, by: number) {
  const next = (counts.get(key) ?? 0) + by
  if (next === 0) counts.delete(key)
  else counts.set(key, next)
}
