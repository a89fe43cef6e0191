/**
 * Rows (the first is the header) as lines of text a person reads: each column padded to its widest
 * cell, two spaces apart; the last column is left to run on.
 */
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
