import { classificationCell, stageCell, STAGES, type EventRow } from './grid-model.js'
import { placeOf, type CellState } from './labels.js'

/** A place of an event (a stage at a site, or the classification) and its state. */
export interface PlaceState {
  place: string
  state: CellState
}

function cellsOf(row: EventRow, sites: readonly string[]): PlaceState[] {
  return [
    { place: placeOf(null, 'tsar_classification'), state: classificationCell(row).state },
    ...sites.flatMap((site) => STAGES.map((stage) => ({ place: placeOf(site, stage), state: stageCell(row, site, stage).state })))
  ]
}

/** The places of the event's shown sites that are wrong, contradictions first, each in the grid's order. */
export function wrongPlaces(row: EventRow, sites: readonly string[]): PlaceState[] {
  const cells = cellsOf(row, sites)
  return [...cells.filter((cell) => cell.state === 'contradiction'), ...cells.filter((cell) => cell.state === 'stuck')]
}

/** Where an event in progress waits: the first stage not complete at each shown site (or the classification). */
export function waitingPlaces(row: EventRow, sites: readonly string[]): string[] {
  const classification = classificationCell(row).state
  if (classification !== 'complete') return [placeOf(null, 'tsar_classification')]
  return sites.flatMap((site) => {
    const stage = STAGES.find((candidate) => stageCell(row, site, candidate).state !== 'complete')
    return stage === undefined ? [] : [placeOf(site, stage)]
  })
}
