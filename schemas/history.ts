import { Type, type Static } from '@sinclair/typebox'
import { WRITTEN_STATUSES } from '../src/vocabulary.js'
import { EventNoSchema, PartLimitSchema, ref, StringEnum } from './common.js'

const transitionFields = {
  key: Type.String({ description: 'The trace key that changed: `stages/tsar_classification` or `stages/{stage}/sites/{site}`.' }),
  from: Type.Union([Type.String(), Type.Null()], {
    description: 'The stored value before, as stored (it may be `not_required`); null when the trace did not exist.'
  }),
  to: StringEnum(WRITTEN_STATUSES, { description: 'The value written, as stored (`not_required` too).' }),
  at: Type.Number({ description: 'When it was written, seconds since the epoch (float).' }),
  by: Type.String({ description: 'The user name of the writer.' })
}

export const TransitionSchema = Type.Object(transitionFields, {
  $id: 'Transition',
  additionalProperties: false,
  description: 'One change of a stored trace value made through update-trace.'
})
export type Transition = Static<typeof TransitionSchema>

export const StreamedTransitionSchema = Type.Object(
  { event_no: EventNoSchema, ...transitionFields },
  {
    $id: 'StreamedTransition',
    additionalProperties: false,
    description: 'The `data` of an `event: transition` message of the live stream: a transition and its event.'
  }
)
export type StreamedTransition = Static<typeof StreamedTransitionSchema>

export const TraceHistorySchema = Type.Object(
  { event_no: EventNoSchema, transitions: Type.Array(ref(TransitionSchema), { description: 'Oldest first: by `at`, then the order of writing.' }) },
  { $id: 'TraceHistory', additionalProperties: false, description: 'Every recorded change of an event’s trace.' }
)
export type TraceHistory = Static<typeof TraceHistorySchema>

export const HistoryQuerySchema = Type.Object({
  after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'Where the part before ended, as the `Link` of that part gives it (opaque). Without it, the history from its oldest transition.'
    })
  ),
  limit: Type.Optional(PartLimitSchema),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      deprecated: true,
      description: 'Replaced by `after`: only 0 (the first part) is still read; any other offset is 400 naming `after`.'
    })
  )
})
