import { Type } from '@sinclair/typebox'

export const VersionSchema = Type.Object(
  { version: Type.String({ description: 'Version of the running service (package.json).' }) },
  { $id: 'Version', additionalProperties: false }
)

export const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health', additionalProperties: false })
