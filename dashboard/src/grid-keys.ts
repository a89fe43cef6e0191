/** A cell of the grid's matrix: row and column of the rendered table, ignoring row spans. */
export interface Position {
  row: number
  column: number
}

const PAGE = 10

/**
 * Where a key moves the focus in a grid whose matrix holds each cell's id, row by row; a cell that
 * spans rows appears under the same id in each of them, and up or down moves past it in one step.
 * Undefined for keys that do not move.
 */
export function moveFocus(ids: readonly (readonly string[])[], at: Position, key: string, ctrl: boolean): Position | undefined {
  const rows = ids.length
  if (rows === 0) return undefined
  const columns = ids[0]!.length
  const here = ids[at.row]?.[at.column]
  const clampRow = (row: number) => Math.min(rows - 1, Math.max(0, row))
  const vertical = (step: 1 | -1, count: number): Position => {
    let row = at.row
    let last = here
    for (let moved = 0; moved < count; moved++) {
      let next = row + step
      while (next >= 0 && next < rows && ids[next]![at.column] === last) next += step
      if (next < 0 || next >= rows) break
      row = next
      last = ids[row]![at.column]
    }
    return { row: clampRow(row), column: at.column }
  }
  switch (key) {
    case 'ArrowRight':
      return { row: at.row, column: Math.min(columns - 1, at.column + 1) }
    case 'ArrowLeft':
      return { row: at.row, column: Math.max(0, at.column - 1) }
    case 'ArrowDown':
      return vertical(1, 1)
    case 'ArrowUp':
      return vertical(-1, 1)
    case 'PageDown':
      return vertical(1, PAGE)
    case 'PageUp':
      return vertical(-1, PAGE)
    case 'Home':
      return ctrl ? { row: 0, column: 0 } : { row: at.row, column: 0 }
    case 'End':
      return ctrl ? { row: rows - 1, column: columns - 1 } : { row: at.row, column: columns - 1 }
    default:
      return undefined
  }
}

/** The position of a cell id in the matrix (its first row), or undefined when it is not there. */
export function positionOf(ids: readonly (readonly string[])[], id: string): Position | undefined {
  for (let row = 0; row < ids.length; row++) {
    const column = ids[row]!.indexOf(id)
    if (column !== -1) return { row, column }
  }
  return undefined
}

/** The grid's tab stop: a cell id, and the row it was reached in (a cell spanning rows is in several). */
export interface TabStop {
  id: string
  row: number
}

/**
 * Where the tab stop is now that rows may have come and gone (live updates, filters): in its row if
 * the id is still there, else wherever the id went, else the first cell.
 */
export function tabStopAt(ids: readonly (readonly string[])[], stop: TabStop | undefined): Position {
  if (stop === undefined) return { row: 0, column: 0 }
  const column = ids[stop.row]?.indexOf(stop.id) ?? -1
  return column !== -1 ? { row: stop.row, column } : (positionOf(ids, stop.id) ?? { row: 0, column: 0 })
}
