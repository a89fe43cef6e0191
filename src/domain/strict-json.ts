import { isUtf8 } from 'node:buffer'
import { InputError } from './input-error.js'

type Path = (string | number)[]

/** Where the scanner stands: in an object (the names seen so far) or in an array (the index). */
type Frame = { names: Set<string>; name: string | undefined; awaitingName: boolean } | { index: number }

/**
 * JSON text as JSON.parse reads it, refusing (InputError) what it accepts and changes silently: a member name twice in one
 * object, a lone surrogate (as UTF-8 it comes back U+FFFD), a member `__proto__`. Text that is no JSON throws SyntaxError.
 */
export function parseStrictJson(text: string): unknown {
  const value: unknown = JSON.parse(text)
  checkMembersAndStrings(text)
  return value
}

/** Bytes as text, refusing bytes that are not UTF-8 (decoding would turn each into U+FFFD unseen). */
export function utf8Text(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw new InputError([], 'is not UTF-8 text: some bytes are no UTF-8 character')
  return bytes.toString('utf8')
}

/** One pass over text JSON.parse accepted: strings found with indexOf, decoded only when they hold an escape. */
function checkMembersAndStrings(text: string): void {
  const frames: Frame[] = []
  const pathTo = (withName: boolean): Path =>
    frames.flatMap((frame, depth): Path => {
      if ('index' in frame) return [frame.index]
      const last = depth === frames.length - 1
      return frame.name === undefined || (last && !withName) ? [] : [frame.name]
    })
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at)
    const top = frames[frames.length - 1]
    switch (char) {
      case 0x7b /* { */:
        frames.push({ names: new Set(), name: undefined, awaitingName: true })
        break
      case 0x5b /* [ */:
        frames.push({ index: 0 })
        break
      case 0x7d /* } */:
      case 0x5d /* ] */:
        frames.pop()
        break
      case 0x2c /* , */:
        if (top === undefined) break
        if ('index' in top) top.index++
        else top.awaitingName = true
        break
      case 0x22 /* " */: {
        const end = closingQuote(text, at)
        const token = text.slice(at, end + 1)
        const escaped = token.includes('\\')
        const value = escaped ? (JSON.parse(token) as string) : token.slice(1, -1)
        if (top !== undefined && !('index' in top) && top.awaitingName) {
          checkName(top, value, escaped, () => pathTo(false))
          top.awaitingName = false
          top.name = value
        } else {
          const lone = escaped ? loneSurrogateOf(value) : undefined
          if (lone !== undefined) {
            throw new InputError(pathTo(true), `holds a lone surrogate (${lone}), which is no Unicode character: send the pair, or neither half`)
          }
        }
        at = end
        break
      }
    }
  }
}

/** `path` is computed only for a refusal: computing it for every name would make deep nesting quadratic. */
function checkName(frame: { names: Set<string> }, name: string, escaped: boolean, path: () => Path): void {
  const lone = escaped ? loneSurrogateOf(name) : undefined
  if (lone !== undefined) throw new InputError(path(), `has a member name holding a lone surrogate (${lone}), which is no Unicode character`)
  if (name === '__proto__') {
    throw new InputError(path(), 'has a member named "__proto__", which this service refuses: in JavaScript it names the prototype of an object')
  }
  if (frame.names.has(name)) {
    throw new InputError(path(), `has the member ${JSON.stringify(name)} twice: send each member of an object once`)
  }
  frame.names.add(name)
}

/** The index of the quote that ends the string opening at `start` (a quote after an odd run of backslashes is escaped). */
function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start + 1)
  for (;;) {
    let backslashes = 0
    while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return end
    end = text.indexOf('"', end + 1)
  }
}

function loneSurrogateOf(text: string): string | undefined {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0xd800 || code > 0xdfff) continue
    const next = text.charCodeAt(index + 1)
    if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      index++
      continue
    }
    return `\\u${code.toString(16)}`
  }
  return undefined
}
