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
          'Also carry `event: verdict` messages (VerdictChange): each change of an event’s audit verdict, each stage that turns stuck ' +
          'as its deadline passes, and each change of the sites an event asks, within 2 s, with the same filters (a `site` stream also ' +
          'hears an event that leaves that site or the audit). A client that falls behind gets the changes that came meanwhile as ' +
          '`event: verdicts` messages instead, each event once. Without it the stream carries transitions only.'
      })
    )
  })

/** One message of the text body, modelled as SSE tooling models an event: its fields, with `data` parsed as JSON. */
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

/** One `event: verdicts` message: the changes that came while the client was behind, folded to one per event. */
export const verdictsMessageSchema = (sites: Sites) =>
  Type.Object(
    {
      event: Type.Literal('verdicts', { description: 'The `event:` line: `verdicts`.' }),
      data: Type.Object(
        {
          changes: Type.Array(ref(verdictChangeSchema(sites)), {
            minItems: 1,
            maxItems: 500,
            description:
              'One change per event, each event at most once in the message: from the verdict before its first change the client had not ' +
              'received (`from`) to its latest (`to`, `at`, `audit`), with every stage that turned stuck meanwhile and every site it left.'
          })
        },
        { additionalProperties: false, description: 'The `data:` line: one line of JSON.' }
      )
    },
    {
      description:
        'Verdict changes folded for a client that fell behind (more than the stream holds as single messages: a burst such as a ' +
        'deadline passing for thousands of events at once). Sent only to streams opened with `verdicts=true`, in place of their ' +
        '`event: verdict` messages while the client catches up; a client that keeps up gets `event: verdict` messages only. ' +
        'Apply the changes in order, as `verdict` messages: an event named here may change again in a later message.'
    }
  )
