import { AjvCompiler, type BuildCompilerFromPool, type RouteDefinition } from '@fastify/ajv-compiler'

const common = { useDefaults: true, removeAdditional: true, allErrors: false } as const

type Compile = ReturnType<BuildCompilerFromPool>

/**
 * Two Ajv instances: the URL's parts (query, path) are strings on the wire and are coerced to the
 * schema's types; JSON bodies are typed already and are not, so `{"event": "12"}` or `true` where an
 * integer belongs is a 400 rather than a silently coerced number.
 */
export const buildValidator: BuildCompilerFromPool = (externalSchemas, options) => {
  const pool = AjvCompiler()
  const plugins = options?.plugins ?? []
  const forBody = pool(externalSchemas, { plugins, customOptions: { ...common, coerceTypes: false } })
  const forUrl = pool(externalSchemas, { plugins, customOptions: { ...common, coerceTypes: 'array' } })
  // Fastify calls the compiler with a route definition, though the published type says a schema.
  const compile = (route: RouteDefinition) =>
    ((route.httpPart === 'body' ? forBody : forUrl) as unknown as (route: RouteDefinition) => unknown)(route)
  return compile as unknown as Compile
}
