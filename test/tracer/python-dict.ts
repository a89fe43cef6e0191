/*
 * What the Python client makes of a JSON answer, for a replay of it: `json.loads` keeps an
 * object's keys in the order of the text (JSON.parse in JavaScript puts integer-like keys in
 * ascending order instead), and `dict.update` merges a dict but raises ValueError on a list of
 * records, as CPython does.
 */

/** A decoded JSON value, as Python holds it: objects are dicts that keep their keys' order. */
export type PyValue = null | boolean | number | string | PyValue[] | PyDict

export class PyValueError extends Error {
  override name = 'ValueError'
}

/** A Python dict: insertion order, a key set again keeps its place. */
export class PyDict {
  readonly entries = new Map<string, PyValue>()

  keys(): string[] {
    return [...this.entries.keys()]
  }

  /** `dict.update(other)`: a dict's items; otherwise a sequence of key/value pairs, or ValueError. */
  update(other: PyValue) {
    if (other instanceof PyDict) {
      for (const [key, value] of other.entries) this.entries.set(key, value)
      return
    }
    if (!Array.isArray(other)) throw new TypeError(`'${typeof other}' object is not iterable`)
    other.forEach((element, index) => {
      const pair = element instanceof PyDict ? element.keys() : element
      if (!Array.isArray(pair) || pair.length !== 2) {
        const length = Array.isArray(pair) ? pair.length : typeof pair === 'string' ? pair.length : 0
        throw new PyValueError(`dictionary update sequence element #${index} has length ${length}; 2 is required`)
      }
      const key = pair[0]!
      // Keyed by strings here: the answers this replays hold no other keys.
      this.entries.set(typeof key === 'string' ? key : JSON.stringify(key), pair[1]!)
    })
  }
}

/** `json.loads(text)`: objects become PyDicts with their keys in the order written. */
export function loads(text: string): PyValue {
  const parser = new Parser(text)
  const value = parser.value()
  parser.end()
  return value
}

class Parser {
  #at = 0
  constructor(readonly text: string) {}

  value(): PyValue {
    this.#space()
    const char = this.text[this.#at]
    if (char === '{') return this.#object()
    if (char === '[') return this.#array()
    return JSON.parse(this.#scalar()) as PyValue
  }

  end() {
    this.#space()
    if (this.#at !== this.text.length) throw new SyntaxError(`extra data at ${this.#at}`)
  }

  #object(): PyDict {
    const dict = new PyDict()
    this.#at++
    this.#space()
    if (this.text[this.#at] === '}') return this.#at++, dict
    for (;;) {
      this.#space()
      const key = JSON.parse(this.#scalar()) as unknown
      if (typeof key !== 'string') throw new SyntaxError(`a key at ${this.#at} is not a string`)
      this.#expect(':')
      dict.entries.set(key, this.value())
      if (this.#separator('}')) return dict
    }
  }

  #array(): PyValue[] {
    const list: PyValue[] = []
    this.#at++
    this.#space()
    if (this.text[this.#at] === ']') return this.#at++, list
    for (;;) {
      list.push(this.value())
      if (this.#separator(']')) return list
    }
  }

  /** After a member: true at the closing bracket, false at a comma. */
  #separator(closing: string): boolean {
    this.#space()
    const char = this.text[this.#at++]
    if (char === closing) return true
    if (char !== ',') throw new SyntaxError(`expected , or ${closing} at ${this.#at - 1}`)
    return false
  }

  /** The text of a string, number or literal, for JSON.parse to decode. */
  #scalar(): string {
    const start = this.#at
    if (this.text[start] === '"') {
      this.#at++
      while (this.text[this.#at] !== '"') this.#at += this.text[this.#at] === '\\' ? 2 : 1
      this.#at++
    } else {
      while (this.#at < this.text.length && !',:]} \n\r\t'.includes(this.text[this.#at]!)) this.#at++
    }
    return this.text.slice(start, this.#at)
  }

  #expect(char: string) {
    this.#space()
    if (this.text[this.#at++] !== char) throw new SyntaxError(`expected ${char} at ${this.#at - 1}`)
  }

  #space() {
    while (' \n\r\t'.includes(this.text[this.#at] ?? '_')) this.#at++
  }
}

/** Back to a plain value, for comparing a record with what a GET of it gives. */
export function plain(value: PyValue): unknown {
  if (value instanceof PyDict) return Object.fromEntries([...value.entries].map(([key, item]) => [key, plain(item)]))
  return Array.isArray(value) ? value.map(plain) : value
}
