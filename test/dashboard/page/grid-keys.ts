import t from 'tap'
import { moveFocus, positionOf, tabStopAt } from '../../../dashboard/src/grid-keys.js'

// Two events: event 1 with two sites (its first column spans both rows), event 2 with one.
const ids = [
  ['1', '1:a:x', '1:a:y'],
  ['1', '1:b:x', '1:b:y'],
  ['2', '2:a:x', '2:a:y']
]
const at = (row: number, column: number) => ({ row, column })

t.test('arrow keys move one cell; a cell spanning rows is one step', async (t) => {
  t.strictSame(moveFocus(ids, at(0, 1), 'ArrowDown', false), at(1, 1))
  t.strictSame(moveFocus(ids, at(0, 0), 'ArrowDown', false), at(2, 0), 'past the rows the event spans')
  t.strictSame(moveFocus(ids, at(2, 0), 'ArrowUp', false), at(1, 0), 'into the event above')
  t.strictSame(moveFocus(ids, at(1, 1), 'ArrowRight', false), at(1, 2))
  t.strictSame(moveFocus(ids, at(1, 2), 'ArrowRight', false), at(1, 2), 'the edge holds')
  t.strictSame(moveFocus(ids, at(0, 0), 'ArrowUp', false), at(0, 0))
  t.strictSame(moveFocus(ids, at(2, 1), 'ArrowDown', false), at(2, 1))
})

t.test('Home, End, Page keys and keys that do not move', async (t) => {
  t.strictSame(moveFocus(ids, at(1, 2), 'Home', false), at(1, 0))
  t.strictSame(moveFocus(ids, at(1, 0), 'End', false), at(1, 2))
  t.strictSame(moveFocus(ids, at(1, 1), 'Home', true), at(0, 0))
  t.strictSame(moveFocus(ids, at(0, 1), 'End', true), at(2, 2))
  t.strictSame(moveFocus(ids, at(0, 1), 'PageDown', false), at(2, 1))
  t.strictSame(moveFocus(ids, at(2, 1), 'PageUp', false), at(0, 1))
  t.equal(moveFocus(ids, at(0, 0), 'Tab', false), undefined, 'Tab leaves the grid')
  t.equal(moveFocus([], at(0, 0), 'ArrowDown', false), undefined)
})

t.test('a cell’s position is its first row', async (t) => {
  t.strictSame(positionOf(ids, '1'), at(0, 0))
  t.strictSame(positionOf(ids, '1:b:y'), at(1, 2))
  t.equal(positionOf(ids, 'nope'), undefined)
})

t.test('the tab stop follows its cell when rows come and go', async (t) => {
  t.strictSame(tabStopAt(ids, undefined), at(0, 0), 'the first cell at first')
  t.strictSame(tabStopAt(ids, { id: '1', row: 1 }), at(1, 0), 'a spanning cell keeps the row it was reached in')
  const newEventOnTop = [['3', '3:a:x', '3:a:y'], ...ids]
  t.strictSame(tabStopAt(newEventOnTop, { id: '1:b:y', row: 1 }), at(2, 2), 'moved down with its row')
  t.strictSame(tabStopAt([ids[2]!], { id: '1:b:y', row: 1 }), at(0, 0), 'filtered away: the first cell')
})
