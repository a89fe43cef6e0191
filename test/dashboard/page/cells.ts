import t from 'tap'
import { cellOf } from '../../../dashboard/src/cells.js'
import { finding } from './records.js'

t.test('a cell is a contradiction, else stuck, else what the trace says', async (t) => {
  const stuck = finding('stuck', 'kko', 'baseband_conversion')
  const contradiction = finding('heartbeat-error', 'kko', 'baseband_conversion')
  t.equal(cellOf([], 'kko', 'baseband_conversion', 'complete').state, 'complete')
  t.equal(cellOf([], 'kko', 'baseband_conversion', 'incomplete').state, 'in_progress')
  t.equal(cellOf([], 'kko', 'baseband_conversion', undefined).state, 'in_progress', 'a key the trace lacks is not done')
  t.equal(cellOf([stuck], 'kko', 'baseband_conversion', 'incomplete').state, 'stuck')
  t.equal(cellOf([stuck, contradiction], 'kko', 'baseband_conversion', 'complete').state, 'contradiction', 'contradiction wins')
  t.equal(cellOf([contradiction, stuck], 'kko', 'baseband_conversion', 'incomplete').state, 'contradiction', 'whatever the order')
})

t.test('only the findings naming the cell’s site and stage count, and they come with it', async (t) => {
  const elsewhere = [
    finding('stuck', 'chime', 'baseband_conversion'),
    finding('out-of-order', 'kko', 'data_registration'),
    finding('stuck', null, 'tsar_classification')
  ]
  const cell = cellOf(elsewhere, 'kko', 'baseband_conversion', 'complete')
  t.strictSame(cell, { state: 'complete', findings: [] })
  const classification = cellOf(elsewhere, null, 'tsar_classification', 'incomplete')
  t.equal(classification.state, 'stuck', 'the classification has no site')
  t.strictSame(classification.findings, [elsewhere[2]])
})

t.test('the classification cell of a classified event whose trace says incomplete is a contradiction, its stuck finding beside it', async (t) => {
  const findings = [finding('classified-not-in-trace', null, 'tsar_classification'), finding('stuck', null, 'tsar_classification')]
  const cell = cellOf(findings, null, 'tsar_classification', 'incomplete')
  t.equal(cell.state, 'contradiction')
  t.strictSame(cell.findings, findings, 'both findings come with it')
})
