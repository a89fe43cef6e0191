/** Rows (the first is the header) as lines of text: columns padded to their widest cell, two spaces apart; the last runs on. */
export function aligned(rows: readonly (readonly string[])[], rightAligned: (column: number) => boolean = () => false): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) =>
    row
      .map((cell, column) => {
        if (rightAligned(column)) return cell.padStart(widths[column]!)
        return column === row.length - 1 ? cell : cell.padEnd(widths[column]!)
      })
      .join('  ')
  )
}

/** Characters a terminal acts on or hides rather than shows: controls (ESC, NUL, C1), format characters, line separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu

/** `text` with each such character as a JSON escape (`\u001b`): a message quoting a file never sends its bytes to the terminal. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    const code = char.codePointAt(0)!
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}
