/** Numbers that share their high part (n / 2^16, floored) share a bucket. */
const BUCKET_SPAN = 65_536
/** A bucket holding this many numbers is a bitmap (8 KiB) from then on: smaller than their list. */
const LIST_LIMIT = 4096
const FIRST_LIST_CAPACITY = 16

/** The low parts of a bucket's numbers: a sorted list while there are few, a bitmap once there are many. */
type Bucket = { list: Uint16Array; size: number } | { bitmap: Uint8Array }

/** Safe integers kept as Roaring bitmaps do, in a fraction of a `Set`'s twenty bytes a number: a window read remembers each event sent. */
export class EventNumberSet {
  readonly #buckets = new Map<number, Bucket>()

  /** Adds `n`: true if it was not in the set. */
  add(n: number): boolean {
    const high = Math.floor(n / BUCKET_SPAN)
    const low = n - high * BUCKET_SPAN
    const bucket = this.#buckets.get(high)
    if (bucket === undefined) {
      const list = new Uint16Array(FIRST_LIST_CAPACITY)
      list[0] = low
      this.#buckets.set(high, { list, size: 1 })
      return true
    }
    if ('bitmap' in bucket) return setBit(bucket.bitmap, low)
    const at = insertionPoint(bucket.list, bucket.size, low)
    if (at < bucket.size && bucket.list[at] === low) return false
    if (bucket.size === LIST_LIMIT) {
      const bitmap = new Uint8Array(BUCKET_SPAN / 8)
      for (let i = 0; i < bucket.size; i++) setBit(bitmap, bucket.list[i]!)
      setBit(bitmap, low)
      this.#buckets.set(high, { bitmap })
      return true
    }
    if (bucket.size === bucket.list.length) {
      const grown = new Uint16Array(bucket.list.length * 2)
      grown.set(bucket.list)
      bucket.list = grown
    }
    bucket.list.copyWithin(at + 1, at, bucket.size)
    bucket.list[at] = low
    bucket.size++
    return true
  }

  /** Bytes held by the buckets' arrays (what the set costs beyond a small fixed part per bucket). */
  get arrayBytes(): number {
    let bytes = 0
    for (const bucket of this.#buckets.values()) bytes += 'bitmap' in bucket ? bucket.bitmap.byteLength : bucket.list.byteLength
    return bytes
  }
}

function setBit(bitmap: Uint8Array, low: number): boolean {
  const mask = 1 << (low & 7)
  const byte = bitmap[low >>> 3]!
  if ((byte & mask) !== 0) return false
  bitmap[low >>> 3] = byte | mask
  return true
}

/** Where `low` is or would go in the first `size` entries of the sorted `list`. Numbers mostly come in rising order: the end is tried first. */
function insertionPoint(list: Uint16Array, size: number, low: number): number {
  if (size === 0 || list[size - 1]! < low) return size
  let from = 0
  let to = size
  while (from < to) {
    const middle = (from + to) >>> 1
    if (list[middle]! < low) from = middle + 1
    else to = middle
  }
  return from
}
