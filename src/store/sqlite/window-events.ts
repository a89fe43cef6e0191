import type Database from 'better-sqlite3'
import type { WindowEventParts } from '../../domain/records.js'
import type { EventRecordsReader } from './event-records.js'
import { basebandWhileRewriting, type OutputTextsState } from './output-texts.js'

type Parameters = { afterTime: number; afterNo: number; end: number; limit: number }
type Position = { time: number; event_no: number }

const compare = (a: Position, b: Position) => a.time - b.time || a.event_no - b.event_no

/**
 * The window's events in the audit with what their facts are made from, a page after a position,
 * in (event time, event_no) order; inside the caller's read transaction. The events come from two
 * index ranges: those the kept flag lists (events_baseband_heads) and those with a kept audit
 * (audits_by_time). Both name the same events unless one was edited by hand: a flag cleared by
 * hand still leaves the event's kept row, and the records (its actions) say whether it is in the
 * audit, not the flag. Past the last row of a range that filled its page, that range may hold rows
 * not read yet, so the page stops there; an event left out is made up for by the next read.
 * While the output texts are made again, the flag of a row the rewrite has not reached is made
 * from its actions (output-texts.ts): it may still say what other sites asked for.
 */
export function windowEvents(db: Database.Database, records: EventRecordsReader, texts: OutputTextsState) {
  const flaggedSql = (flag: string) =>
    `SELECT event_no, timestamp_ms AS time FROM events
     WHERE ${flag} = 1 AND (timestamp_ms, event_no) > (@afterTime, @afterNo) AND timestamp_ms < @end
     ORDER BY timestamp_ms, event_no LIMIT @limit`
  const flagged = db.prepare<Parameters, { event_no: number; time: number }>(flaggedSql('baseband_requested'))
  const flaggedRewriting = db.prepare<Parameters & { eventsMade: number }, { event_no: number; time: number }>(flaggedSql(basebandWhileRewriting('')))
  const kept = db.prepare<Parameters, { event_no: number; time: number }>(
    `SELECT event_no, event_time AS time FROM audits
     WHERE (event_time, event_no) > (@afterTime, @afterNo) AND event_time < @end
     ORDER BY event_time, event_no LIMIT @limit`
  )
  return (afterTime: number, afterNo: number, end: number, limit: number): WindowEventParts[] => {
    const page: WindowEventParts[] = []
    for (let position: Position = { time: afterTime, event_no: afterNo }; ; ) {
      const wanted = limit - page.length
      const parameters = { afterTime: position.time, afterNo: position.event_no, end, limit: wanted }
      const made = texts.underWay()
      const listed = made === null ? flagged.all(parameters) : flaggedRewriting.all({ ...parameters, eventsMade: made.events })
      const ranges = [listed, kept.all(parameters)]
      const horizon = ranges
        .filter((rows) => rows.length === wanted)
        .map((rows) => rows.at(-1)!)
        .reduce<Position | null>((nearest, last) => (nearest === null || compare(last, nearest) < 0 ? last : nearest), null)
      const eventNos = [...new Set(ranges.flat().map((row) => row.event_no))]
      const read = records.of(eventNos)
      const found: WindowEventParts[] = []
      for (const eventNo of eventNos) {
        const { event, ...parts } = read.get(eventNo)!
        if (event === null || !event.baseband_requested || event.timestamp >= end) continue
        const at = { time: event.timestamp, event_no: eventNo }
        if (compare(at, position) <= 0 || (horizon !== null && compare(at, horizon) > 0)) continue
        found.push({ ...parts, event })
      }
      found.sort((a, b) => a.event.timestamp - b.event.timestamp || a.event.event_no - b.event.event_no)
      page.push(...found.slice(0, wanted))
      if (horizon === null || page.length === limit) return page
      position = horizon
    }
  }
}
