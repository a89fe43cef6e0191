import { Type, type Static } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { EventNoPathSchema, ref, StringEnum } from './common.js'

export const LargerDatasetSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1024 })),
    scope: Type.Optional(Type.String({ maxLength: 1024 })),
    preferred_storage_elements: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 100 })),
    deletion_policy: Type.Optional(Type.String({ maxLength: 1024 }))
  },
  { $id: 'LargerDataset', additionalProperties: false, description: 'Dataset metadata; `{}` when unknown.' }
)

export const DatatrailMemberSchema = Type.Object(
  {
    registered: Type.Boolean({ description: 'Whether the data is registered.' }),
    should_be_at_minoc: Type.Boolean({ description: 'Whether the data should be at the storage element.' }),
    larger_dataset: ref(LargerDatasetSchema),
    data_path: Type.String({ maxLength: 4096 }),
    num_files: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    missing_files: Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 100_000, description: 'Paths of missing files.' })
  },
  { $id: 'DatatrailMember', additionalProperties: false }
)
export type DatatrailMember = Static<typeof DatatrailMemberSchema>

/** Every data product of the configured sites, each with all six fields. */
export const datatrailSchema = (sites: Sites) =>
  Type.Object(Object.fromEntries(sites.dataProducts.map((member) => [member, ref(DatatrailMemberSchema)])), {
    $id: 'Datatrail',
    additionalProperties: false,
    description: 'Registration and replication of each data product.'
  })

export const datatrailParamsSchema = (sites: Sites) =>
  Type.Object({ event_no: EventNoPathSchema, member: StringEnum(sites.dataProducts, { description: 'The data product.' }) })
