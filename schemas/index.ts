import type { TSchema } from '@sinclair/typebox'
import {
  AccessTokenResponseSchema,
  CredentialsSchema,
  RefreshRequestSchema,
  TokenInvalidSchema,
  TokenPairSchema,
  TokenValidSchema
} from './auth.js'
import { ErrorEnvelopeSchema, ExceptionSchema } from './common.js'
import { HealthSchema, VersionSchema } from './service.js'

/** Every schema with an `$id`: registered once with `fastify.addSchema`, named in openapi.yaml. */
export const sharedSchemas: TSchema[] = [
  ExceptionSchema,
  ErrorEnvelopeSchema,
  CredentialsSchema,
  TokenPairSchema,
  AccessTokenResponseSchema,
  RefreshRequestSchema,
  TokenValidSchema,
  TokenInvalidSchema,
  VersionSchema,
  HealthSchema
]
