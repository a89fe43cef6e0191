/**
 * Started by backup.ts as a process of its own: writes events one at a time through the store at
 * argv[2], event_no argv[3] and up, and prints each event_no once its write is acknowledged, until killed.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { EventRecord } from '../../src/domain/records.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { defaultSites } from '../sites.js'

const [path, first] = process.argv.slice(2)
const store = openSqliteStore(path!, defaultSites, { whenMissing: 'refuse', configuration: 'write' })
const event = (event_no: number): EventRecord => ({
  event_no,
  timestamp: Date.parse('2026-03-01T00:00:00Z'),
  snr: 10,
  dm: null,
  known_source_name: 'EXT',
  tsar_classification: null,
  actions: { want: { baseband: true }, got: {} },
  baseband_requested: true,
  update_timestamp: 1
})
for (let eventNo = Number(first); ; eventNo++) {
  await store.events.upsert([event(eventNo)])
  process.stdout.write(`${eventNo}\n`)
  // A write a millisecond or so: continuous, without taking a whole core of a shared machine.
  await sleep(1)
}
