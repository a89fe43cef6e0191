import { Type } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { EVENT_NO_BOUNDS, ref, StringEnum } from './common.js'
import { StreamedTransitionSchema } from './history.js'
import { verdictChangeSchema } from './audit.js'

/** The filters of the live trace stream; without them it carries every transition. */
export const streamQuerySchema = (sites: Sites) =>
  Type.Object({
    event_no: Type.Optional(Type.Integer({ ...EVENT_NO_BOUNDS, description: 'Only the transitions of this event: an integer from 0 to 2^53-1, in decimal.' })),
    site: Type.Optional(
      StringEnum(sites.names, {
        description:
          'Only the transitions of keys at this site (`stages/{stage}/sites/{site}`; `stages/tsar_classification` is at no site), ' +
          'and the verdict changes of events that asked this site for baseband data.'
      })
    ),
    verdicts: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Also carry `event: verdict` messages (VerdictChange): each change of an event’s audit verdict, and each stage that turns stuck ' +
          'as its deadline passes, within 2 s, with the same filters. Without it the stream carries transitions only.'
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

/** One `event: verdict` message of the stream (only with `verdicts=true`), modelled as TransitionMessageSchema is. */
export const verdictMessageSchema = (sites: Sites) =>
  Type.Object(
    {
      event: Type.Literal('verdict', { description: 'The `event:` line: `verdict`.' }),
      data: ref(verdictChangeSchema(sites), { description: 'The `data:` line: one line of JSON.' })
    },
    { description: 'A verdict change, sent only to streams opened with `verdicts=true`; written as a transition message is.' }
  )
