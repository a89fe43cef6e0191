import type { RouteDefinition } from '@fastify/ajv-compiler'
import type { TSchema } from '@sinclair/typebox'
import { sharedSchemas } from '../../../schemas/index.js'
import type { Sites } from '../../vocabulary.js'
import { buildValidator } from './schema-compilers.js'
import { describeValidationIssue, type ValidationIssue } from './validation-issues.js'

/** Undefined when a value fits the schema, else what is wrong with it, as one line. */
export type BodyCheck = (value: unknown) => string | undefined

type Validate = ((value: unknown) => boolean) & { errors?: ValidationIssue[] | null }

/** Checks of records read from a file (`tracer import`), by the very compiler and schemas of the routes that take them. */
export function bodyChecks(sites: Sites): (schema: TSchema) => BodyCheck {
  const externals = Object.fromEntries(sharedSchemas(sites).map((schema) => [schema.$id!, schema]))
  const compile = buildValidator(externals, {}) as unknown as (route: Partial<RouteDefinition>) => Validate
  return (schema) => {
    const validate = compile({ schema, httpPart: 'body' as RouteDefinition['httpPart'], method: 'POST', url: '' })
    return (value) => (validate(value) ? undefined : describeValidationIssue([], validate.errors![0]!))
  }
}
