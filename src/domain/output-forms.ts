import type { Sites } from '../vocabulary.js'
import { digestOf, FIXTURE_EVENTS, FIXTURE_SITES } from './audit/signature-fixtures.js'
import { eventOutput, wantsBaseband } from './events.js'
import type { EventRecord, TraceRecord } from './records.js'
import { toIsoUtc } from './time-window.js'
import { traceOutput } from './trace.js'

// The JSON text the window routes send, made as a record is written (SQLite) or read (MongoDB): what a client reads is
// decided in `traceOutput` and `eventOutput`; this fixes only the text, so every store makes the same bytes.

/** The event as `/v1/events` sends it: only the sites' actions are output. */
export const eventJson = (event: EventRecord, sites: Sites): string => JSON.stringify(eventOutput(event, sites))

export const traceJson = (eventNo: number, stored: TraceRecord | null, sites: Sites): string =>
  JSON.stringify(traceOutput(eventNo, stored, sites))

export const newTraceJson = (sites: Sites): string => traceJson(0, null, sites)

/** A baseband-callback element's members from the event, as an unclosed object that `callbackJson` closes: no site is in it, so it never needs rewriting. */
export const callbackHead = (event: Pick<EventRecord, 'event_no' | 'snr' | 'known_source_name' | 'timestamp'>): string =>
  headOf(event.event_no, event.snr, event.known_source_name, toIsoUtc(event.timestamp))

const headOf = (event_no: number, snr: number, known_source_name: string, timestamp_utc: string) =>
  JSON.stringify({ event_no, snr, known_source_name, timestamp_utc }).slice(0, -1)

/** `eventJson`, `callbackHead` and `wantsBaseband` of one event, its output made once for the three (SQLite keeps them beside the record). */
export function eventForms(event: EventRecord, sites: Sites): { json: string; head: string; baseband: boolean } {
  const output = eventOutput(event, sites)
  return {
    json: JSON.stringify(output),
    head: headOf(output.event_no, output.snr, output.known_source_name, output.timestamp_utc),
    baseband: wantsBaseband(output.actions, sites)
  }
}

export const callbackJson = (head: string, traceText: string | null): string =>
  traceText === null ? `${head}}` : `${head},"trace":${traceText}}`

/** What the stored texts were made under: the sites, and a digest of the fixtures' texts, so a changed form makes them again. */
export const outputSignature = (sites: Sites, forms: OutputForms = OUTPUT_FORMS): string => {
  const made = FIXTURE_EVENTS.map(({ event, trace }, index) => {
    const eventNo = event?.event_no ?? index + 1
    return {
      event: event === null ? null : [forms.eventJson(event, FIXTURE_SITES), forms.callbackHead(event), forms.wantsBaseband(event.actions, FIXTURE_SITES)],
      trace: forms.traceJson(eventNo, trace, FIXTURE_SITES)
    }
  })
  return JSON.stringify({ sites: sites.names, texts: digestOf([made, forms.traceJson(0, null, FIXTURE_SITES)]) })
}

/** What outputSignature digests; a test passes altered ones to show that a change moves it. */
export interface OutputForms {
  eventJson: typeof eventJson
  traceJson: typeof traceJson
  callbackHead: typeof callbackHead
  wantsBaseband: typeof wantsBaseband
}

export const OUTPUT_FORMS: OutputForms = { eventJson, traceJson, callbackHead, wantsBaseband }
