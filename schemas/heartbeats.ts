import { Type, type Static } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { EventNoSchema, PartLimitSchema, ref, StringEnum } from './common.js'

export const HeartbeatSentSchema = Type.Object(
  { trigger_time: Type.String({ format: 'date-time', description: 'ISO 8601.' }), error: Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]) },
  { $id: 'HeartbeatSent', additionalProperties: false, description: 'What the site was asked for, and when.' }
)

export const HeartbeatReceivedSchema = Type.Object(
  {
    total_data_files: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    dir_size_gb: Type.Number({ minimum: 0 }),
    finished_time: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    heartbeat_sent_unix_s: Type.Number()
  },
  { $id: 'HeartbeatReceived', additionalProperties: false, description: 'What the site has received so far.' }
)

const heartbeatFields = (sites: Sites) => ({
  heartbeat_id: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Unique id of the heartbeat.' }),
  site: StringEnum(sites.names),
  sent: ref(HeartbeatSentSchema),
  received: ref(HeartbeatReceivedSchema)
})

export const heartbeatSchema = (sites: Sites) => Type.Object(heartbeatFields(sites), { $id: 'Heartbeat', additionalProperties: false })

export const heartbeatInputSchema = (sites: Sites) =>
  Type.Object(
    { event_no: EventNoSchema, ...heartbeatFields(sites) },
    { $id: 'HeartbeatInput', additionalProperties: false, description: 'A heartbeat record and the event it belongs to.' }
  )
export type HeartbeatInput = Static<ReturnType<typeof heartbeatInputSchema>>
export type Heartbeat = Omit<HeartbeatInput, 'event_no'>

export const heartbeatBatchSchema = (sites: Sites) => Type.Array(ref(heartbeatInputSchema(sites)), { minItems: 1, maxItems: 1000 })

export const HeartbeatPartQuerySchema = Type.Object({
  after_heartbeat_id: Type.Optional(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Only heartbeats with a greater heartbeat_id: the last one of the part before.' })
  ),
  limit: Type.Optional(PartLimitSchema)
})
