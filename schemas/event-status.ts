import { Type } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { EventNoSchema, ref } from './common.js'
import { datatrailSchema } from './datatrail.js'
import { actionsSchema } from './events.js'
import { heartbeatSchema } from './heartbeats.js'
import { traceSchema } from './trace.js'

/** One event's full status; all seven fields are always present. */
export const eventStatusSchema = (sites: Sites) =>
  Type.Object(
    {
      actions: ref(actionsSchema(sites)),
      tsar_classification: Type.String({ description: 'Classification; `unclassified` when none is stored.' }),
      datatrail: ref(datatrailSchema(sites)),
      trace: ref(traceSchema(sites)),
      heartbeats: Type.Array(ref(heartbeatSchema(sites)), { description: 'Ordered by heartbeat_id.' }),
      event_no: EventNoSchema,
      update_timestamp: Type.Number({ description: 'Seconds since the epoch of the latest update of any part.' })
    },
    { $id: 'EventStatus', additionalProperties: false }
  )
