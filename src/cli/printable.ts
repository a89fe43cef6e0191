/** Characters a terminal acts on or hides rather than shows: controls (ESC, NUL, C1), format characters, line separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu

/**
 * `text` with every character that is not shown as itself written as a JSON escape (`\u001b`): a
 * message that quotes a file, such as JSON.parse's excerpt of a bad line, then never sends that
 * file's bytes to the terminal as they are.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    const code = char.codePointAt(0)!
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}
