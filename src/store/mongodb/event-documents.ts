import type { Document } from 'mongodb'
import type { EventRecord } from '../../domain/records.js'
import { millisIn, numberIn, plain } from './documents.js'

/** An event document: the port's fields, with the event time as a BSON date (readable, sortable). */
export const toDocument = (event: EventRecord) => ({ ...event, timestamp: new Date(event.timestamp) })

/** Tolerant of documents other programs wrote: a missing field reads as its empty value. */
export const toEvent = (document: Document): EventRecord => ({
  event_no: numberIn(document.event_no, 0),
  timestamp: millisIn(document.timestamp, 0),
  snr: numberIn(document.snr, 0),
  dm: document.dm === null || document.dm === undefined ? null : numberIn(document.dm, 0),
  known_source_name: typeof document.known_source_name === 'string' ? document.known_source_name : '',
  tsar_classification: typeof document.tsar_classification === 'string' ? document.tsar_classification : null,
  actions: (plain(document.actions) ?? { want: {}, got: {} }) as EventRecord['actions'],
  baseband_requested: document.baseband_requested === true,
  update_timestamp: numberIn(document.update_timestamp, 0)
})

