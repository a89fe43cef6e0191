import { Type } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { EVENT_NO_BOUNDS, ref, StringEnum } from './common.js'
import { StreamedTransitionSchema } from './history.js'

/** The filters of the live trace stream; without them it carries every transition. */
export const streamQuerySchema = (sites: Sites) =>
  Type.Object({
    event_no: Type.Optional(Type.Integer({ ...EVENT_NO_BOUNDS, description: 'Only the transitions of this event: an integer from 0 to 2^53-1, in decimal.' })),
    site: Type.Optional(
      StringEnum(sites.names, {
        description: 'Only the transitions of keys at this site (`stages/{stage}/sites/{site}`); `stages/tsar_classification` is at no site.'
      })
    )
  })

/**
 * One message of the stream, modelled as SSE tooling models an event: its fields, with `data`
 * parsed as the JSON it holds. The body is text; this is the shape of each message in it.
 */
export const TransitionMessageSchema = Type.Object(
  {
    event: Type.Literal('transition', { description: 'The `event:` line: always `transition`.' }),
    data: ref(StreamedTransitionSchema, { description: 'The `data:` line: one line of JSON.' })
  },
  {
    description:
      'One message of the live stream. Server-sent events, UTF-8. Each transition is one message: a line `event: transition`, a line `data: ` followed by the ' +
      'transition as one line of JSON (StreamedTransition), and a blank line. Lines that begin with `:` are comments, sent when ' +
      'the stream opens and every 15 s after: ignore them. No `id:` or `retry:` lines are sent.'
  }
)
