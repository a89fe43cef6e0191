import type { FeedTransition } from '../../domain/records.js'
import { siteOfKey, type TransitionFilter } from '../../domain/transition-filter.js'
import type { FeedHub } from './feed-hub.js'

/** Where an item belongs, as the filters see it: its event, and the sites it is at (none: only streams of every site take it). */
export interface ItemPlace {
  eventNo: number
  sites: readonly string[]
}

/** A transition is at the site of its key; the classification key is at none. */
const transitionPlace = (transition: FeedTransition): ItemPlace => {
  const site = siteOfKey(transition.key)
  return { eventNo: transition.event_no, sites: site === null ? [] : [site] }
}

/** Its filter's messages in one buffer shared by the filter's streams, their count, and their items (to fold when behind). Must not block. */
type StreamSink<T = FeedTransition> = (messages: Buffer, count: number, items: readonly T[]) => void

const ANY = '*'
/** Streams handed their part of a page in one turn of the event loop. */
const SLICE = 50
const groupKey = (eventNo: number | string, site: string) => `${eventNo}|${site}`

/** The live streams, grouped by filter: an item finds its groups in a few lookups, and each group's messages are encoded once. */
export class StreamFanOut<T = FeedTransition> {
  readonly #hub: Pick<FeedHub<T>, 'listen' | 'polling'>
  /** The route's serializer, the same for every stream. */
  #message: ((item: T) => string) | undefined
  readonly #placeOf: (item: T) => ItemPlace
  readonly #onSinkError: (error: unknown) => void
  readonly #onUnwritable: (item: T, error: unknown) => void
  readonly #groups = new Map<string, Set<StreamSink<T>>>()
  #streams = 0
  #unwritable = 0
  #listening: Promise<void> | undefined
  #stopListening: (() => void) | undefined

  /** `onUnwritable`: an item that cannot be placed or written (a stored row the schema refuses), skipped for every stream. */
  constructor(
    hub: Pick<FeedHub<T>, 'listen' | 'polling'>,
    onSinkError: (error: unknown) => void,
    placeOf?: (item: T) => ItemPlace,
    onUnwritable: (item: T, error: unknown) => void = () => {}
  ) {
    this.#hub = hub
    this.#onSinkError = onSinkError
    this.#placeOf = placeOf ?? (transitionPlace as unknown as (item: T) => ItemPlace)
    this.#onUnwritable = onUnwritable
  }

  get unwritable(): number {
    return this.#unwritable
  }

  get listeners(): number {
    return this.#streams
  }

  get polling(): boolean {
    return this.#hub.polling
  }

  /** Resolves to what removes the stream once every item written from then on reaches it; rejects (removed) when the feed's position is unknown. */
  async subscribe(filter: TransitionFilter, sink: StreamSink<T>, message: (item: T) => string): Promise<() => void> {
    this.#message = message
    const key = groupKey(filter.eventNo ?? ANY, filter.site ?? ANY)
    let group = this.#groups.get(key)
    if (group === undefined) this.#groups.set(key, (group = new Set()))
    group.add(sink)
    this.#streams++
    try {
      await (this.#listening ??= this.#listen())
    } catch (error) {
      this.#remove(key, sink)
      throw error
    }
    let subscribed = true
    return () => {
      if (!subscribed) return
      subscribed = false
      this.#remove(key, sink)
    }
  }

  #listen(): Promise<void> {
    const listening: Promise<void> = this.#hub.listen({ deliver: (transitions) => this.#deliver(transitions) }).then(
      (stop) => {
        // Every stream left while the hub got ready, or another listening began since: this one is not needed.
        if (this.#listening !== listening || this.#streams === 0) return stop()
        this.#stopListening = stop
      },
      (error: unknown) => {
        if (this.#listening === listening) this.#listening = undefined
        throw error
      }
    )
    return listening
  }

  #remove(key: string, sink: StreamSink<T>) {
    const group = this.#groups.get(key)
    if (group?.delete(sink) !== true) return
    if (group.size === 0) this.#groups.delete(key)
    this.#streams--
    if (this.#streams > 0) return
    this.#stopListening?.()
    this.#stopListening = undefined
    this.#listening = undefined
  }

  /** Settles once every stream has its part (the hub reads on only then); an unwritable item is skipped and counted, not the page's loss. */
  #deliver(items: readonly T[]): Promise<void> {
    const wanted = new Map<string, { messages: string[]; items: T[] }>()
    for (const item of items) {
      let keys: string[]
      let message: string
      try {
        const { eventNo, sites } = this.#placeOf(item)
        keys = this.#keysOf(eventNo, sites).filter((key) => this.#groups.has(key))
        if (keys.length === 0) continue
        message = this.#message!(item)
      } catch (error) {
        this.#unwritable++
        this.#onUnwritable(item, error)
        continue
      }
      for (const key of keys) {
        let part = wanted.get(key)
        if (part === undefined) wanted.set(key, (part = { messages: [], items: [] }))
        part.messages.push(message)
        part.items.push(item)
      }
    }
    const deliveries: (() => void)[] = []
    for (const [key, part] of wanted) {
      const buffer = Buffer.from(part.messages.join(''))
      for (const sink of this.#groups.get(key) ?? []) deliveries.push(() => sink(buffer, part.messages.length, part.items))
    }
    return new Promise((resolve) => this.#run(deliveries, 0, resolve))
  }

  /** SLICE streams a turn of the event loop: each is a socket write, and a thousand at once would hold requests up. */
  #run(deliveries: (() => void)[], from: number, done: () => void) {
    const end = Math.min(from + SLICE, deliveries.length)
    for (let index = from; index < end; index++) {
      try {
        deliveries[index]!()
      } catch (error) {
        // One stream's failure is its own: the others still get their messages.
        this.#onSinkError(error)
      }
    }
    if (end < deliveries.length) setImmediate(() => this.#run(deliveries, end, done))
    else done()
  }

  #keysOf(eventNo: number, sites: readonly string[]): string[] {
    const keys = [groupKey(ANY, ANY), groupKey(eventNo, ANY)]
    for (const site of sites) keys.push(groupKey(ANY, site), groupKey(eventNo, site))
    return keys
  }
}
