/**
 * Started by backup.ts as a process of its own: writes events one at a time through the store at
 * argv[2], event_no argv[3] and up, and prints each event_no once its write is acknowledged, until killed.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { defaultSites } from '../sites.js'
import { basebandEvent as event } from '../store/fixtures/baseband-event.js'

const [path, first] = process.argv.slice(2)
const store = openSqliteStore(path!, defaultSites, { whenMissing: 'refuse', configuration: 'write' })
for (let eventNo = Number(first); ; eventNo++) {
  await store.events.upsert([event(eventNo)])
  process.stdout.write(`${eventNo}\n`)
  // A write a millisecond or so: continuous, without taking a whole core of a shared machine.
  await sleep(1)
}
