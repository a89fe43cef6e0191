import { factsOf } from '../domain/audit/kept-facts.js'
import { reportOf, type KeptReport } from '../domain/audit/kept-report.js'
import type { WindowEventParts } from '../domain/records.js'
import type { TimeWindow } from '../domain/time-window.js'
import { keptWindow } from '../reports/kept-window.js'
import { windowParts } from '../reports/window-parts.js'
import { EventNumberSet } from '../store/event-number-set.js'
import type { AuditCheck } from '../kept-audit/keeper.js'
import type { Store } from '../store/port.js'
import type { Sites } from '../vocabulary.js'
import type { CliIo } from './io.js'

/** A page's events with reports made from their records, as the kept audit must have them: the reference. */
const reportsOf = (page: readonly WindowEventParts[], sites: Sites): KeptReport[] =>
  page.map((parts) => reportOf(factsOf(parts.event.event_no, parts, sites), sites)).filter((report) => report !== null)

/** The window's audit made from its records (`--recompute`, after it repaired the kept audit). */
export async function* recomputedWindow(store: Store, window: TimeWindow, sites: Sites): AsyncGenerator<KeptReport[]> {
  for await (const page of windowParts(store, window)) yield reportsOf(page, sites)
}

/** What the plain command found of the window's kept state: each event that differed, with how. */
export interface HeldWindow {
  checked: number
  differed: AuditCheck[]
}

/**
 * The window's audit made from its records (what plain `tracer audit` reports, so that its exit
 * status is what the records say, whether or not a service has checked the kept rows lately), with
 * the kept state of the same events held to those records on the way, read only: each page's kept
 * audits and kept columns, then the kept rows of the window whose records leave them out of it.
 * Nothing is repaired: the command writes nothing.
 */
export async function* heldToRecords(store: Store, window: TimeWindow, sites: Sites, now: number, held: HeldWindow): AsyncGenerator<KeptReport[]> {
  const seen = new EventNumberSet()
  const hold = async (eventNos: number[]) => {
    if (eventNos.length === 0) return
    held.checked += eventNos.length
    const found = await store.audits.check(eventNos, now, { repair: false })
    if (found.mismatches.length + found.unreadable.length + found.columns.length > 0) held.differed.push(found)
  }
  for await (const page of windowParts(store, window)) {
    await hold(page.map((parts) => parts.event.event_no).filter((eventNo) => seen.add(eventNo)))
    yield reportsOf(page, sites)
  }
  for await (const entries of keptWindow(store, window)) await hold(entries.map((entry) => entry.event_no).filter((eventNo) => seen.add(eventNo)))
}

/** Each difference the plain command found, named on standard error with what repairs it; and how many. */
export function nameHeld(io: CliIo, held: HeldWindow): number {
  const events = new Set<number>()
  const unrepaired = 'not repaired here (this command writes nothing): a serving instance or `tracer audit --recompute` repairs it'
  for (const { mismatches, unreadable, columns } of held.differed) {
    for (const { event_no, parts } of mismatches) {
      events.add(event_no)
      io.stderr.write(`event ${event_no}: the kept audit differs from its records (${parts.join(', ')}); ${unrepaired}\n`)
    }
    for (const { event_no, column } of columns) {
      events.add(event_no)
      io.stderr.write(`event ${event_no}: the kept ${column} differs from its records; ${unrepaired}\n`)
    }
    for (const { event_no, error } of unreadable) io.stderr.write(`event ${event_no}: its records cannot be read (${error}); its kept audit was not checked\n`)
  }
  if (events.size > 0) io.stderr.write(`kept state of the window held against the records: ${held.checked} events, ${events.size} differed (each named above); the report is made from the records\n`)
  return events.size
}
