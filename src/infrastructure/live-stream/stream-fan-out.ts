import type { FeedTransition } from '../../domain/records.js'
import { siteOfKey, type TransitionFilter } from '../../domain/transition-filter.js'
import type { FeedHub } from './feed-hub.js'

/** Where an item belongs, as the filters see it: its event, and the sites it is at (none: only unfiltered streams by site take it). */
export interface ItemPlace {
  eventNo: number
  sites: readonly string[]
}

/** A transition is at the site of its key; the classification key is at none. */
export const transitionPlace = (transition: FeedTransition): ItemPlace => {
  const site = siteOfKey(transition.key)
  return { eventNo: transition.event_no, sites: site === null ? [] : [site] }
}

/**
 * Where one live stream takes its share of a page: the messages its filter lets through, joined
 * into one buffer that every stream with the same filter shares, how many messages it holds, and
 * the items they were made of (a stream behind its client may fold those instead). Must not block:
 * the stream queues it for its client.
 */
export type StreamSink<T = FeedTransition> = (messages: Buffer, count: number, items: readonly T[]) => void

const ANY = '*'
/** Streams handed their part of a page in one turn of the event loop. */
const SLICE = 50
const groupKey = (eventNo: number | string, site: string) => `${eventNo}|${site}`

/**
 * The live streams of this process, fed from the hub a page at a time. Streams are grouped by
 * their filter, and a transition finds the groups that want it in four lookups (every event or
 * its own, every site or its own), so a page costs the same however many streams are open; each
 * group's messages are made and encoded once, and the same buffer is written to each of its
 * streams. With a thousand streams the per-stream work is one queued buffer a page, not one
 * message each: what they cost the writes is the bytes their clients read.
 */
export class StreamFanOut<T = FeedTransition> {
  readonly #hub: Pick<FeedHub<T>, 'listen' | 'polling'>
  /** How an item is written for the streams: the same for all of them (the route's serializer). */
  #message: ((item: T) => string) | undefined
  readonly #placeOf: (item: T) => ItemPlace
  readonly #onSinkError: (error: unknown) => void
  readonly #onUnwritable: (item: T, error: unknown) => void
  readonly #groups = new Map<string, Set<StreamSink<T>>>()
  #streams = 0
  #unwritable = 0
  /** Settles once the hub knows where the feed stands; undefined while no stream is open. */
  #listening: Promise<void> | undefined
  #stopListening: (() => void) | undefined

  /**
   * `onUnwritable`: told of an item that cannot be placed or written (a row the store holds in a
   * shape the route's schema refuses), after it is counted; the item is skipped for every stream.
   */
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

  /** Items skipped since this process started because they could not be placed or written. */
  get unwritable(): number {
    return this.#unwritable
  }

  /** Streams listening now. */
  get listeners(): number {
    return this.#streams
  }

  /** Whether the store's feed is being read (exactly while a stream listens). */
  get polling(): boolean {
    return this.#hub.polling
  }

  /**
   * Adds a stream that takes the transitions `filter` lets through, each written by `message`.
   * Resolves, with the function that removes it, once every transition written from then on reaches
   * it; rejects (the stream removed) when the store cannot say where its feed stands.
   */
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

  /**
   * Settles once every stream has been handed its part of the page: the hub reads the next page only
   * then. An item that cannot be placed or written is skipped, counted and reported: one bad row
   * must not cost every stream the rest of its page.
   */
  #deliver(items: readonly T[]): Promise<void> {
    const wanted = new Map<string, { messages: string[]; items: T[] }>()
    for (const item of items) {
      let keys: string[]
      try {
        const { eventNo, sites } = this.#placeOf(item)
        keys = this.#keysOf(eventNo, sites).filter((key) => this.#groups.has(key))
      } catch (error) {
        this.#skip(item, error)
        continue
      }
      if (keys.length === 0) continue
      let message: string
      try {
        message = this.#message!(item)
      } catch (error) {
        this.#skip(item, error)
        continue
      }
      for (const key of keys) {
        const part = wanted.get(key)
        if (part === undefined) {
          wanted.set(key, { messages: [message], items: [item] })
        } else {
          part.messages.push(message)
          part.items.push(item)
        }
      }
    }
    const deliveries: (() => void)[] = []
    for (const [key, part] of wanted) {
      const buffer = Buffer.from(part.messages.join(''))
      for (const sink of this.#groups.get(key) ?? []) deliveries.push(() => sink(buffer, part.messages.length, part.items))
    }
    return new Promise((resolve) => this.#run(deliveries, 0, resolve))
  }

  #skip(item: T, error: unknown) {
    this.#unwritable++
    this.#onUnwritable(item, error)
  }

  /**
   * Hands a page to its streams SLICE at a time, a turn of the event loop between slices: each is
   * a socket write, and a thousand of them at once would keep the requests waiting behind them.
   */
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

  /** The groups an item may belong to: every event or its own, every site or each of its own. */
  #keysOf(eventNo: number, sites: readonly string[]): string[] {
    const keys = [groupKey(ANY, ANY), groupKey(eventNo, ANY)]
    for (const site of sites) keys.push(groupKey(ANY, site), groupKey(eventNo, site))
    return keys
  }
}
