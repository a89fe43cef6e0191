import { AjvCompiler, type BuildCompilerFromPool, type RouteDefinition } from '@fastify/ajv-compiler'
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'

// Compiled once per distinct schema for every app of the process: routes declare one envelope for many statuses, tests build hundreds of apps.
const compiled = new Map<string, unknown>()

function once<T>(key: string, build: () => T): T {
  if (!compiled.has(key)) compiled.set(key, build())
  return compiled.get(key) as T
}

// The shared schemas as a short number in the keys: a copy of their JSON in each would hold heap for the process's life.
const externalsIds = new Map<string, number>()

function externalsKey(externalSchemas: unknown): string {
  const json = JSON.stringify(externalSchemas)
  if (!externalsIds.has(json)) externalsIds.set(json, externalsIds.size)
  return `#${externalsIds.get(json)}`
}

/** A schema's identity for compilation: its top-level description changes nothing compiled. */
function schemaKey(schema: unknown): string {
  if (schema === null || typeof schema !== 'object') return JSON.stringify(schema)
  const { description: _description, ...rest } = schema as Record<string, unknown>
  return JSON.stringify(rest)
}

// Never `removeAdditional`: it would drop a misspelled body member and answer 200 instead of 400.
const common = { useDefaults: true, removeAdditional: false, allErrors: false } as const
type Compile = ReturnType<BuildCompilerFromPool>

// The URL's strings are coerced to the schema's types; JSON bodies are typed already, so `{"event": "12"}` is a 400, not a coerced number.
export const buildValidator: BuildCompilerFromPool = (externalSchemas, options) => {
  const externals = externalsKey(externalSchemas)
  const plugins = options?.plugins ?? []
  // An Ajv instance costs milliseconds to create: only made when a schema is not compiled yet.
  const ajvFor = (body: boolean) =>
    once(`ajv ${body} ${externals}`, () => AjvCompiler()(externalSchemas, { plugins, customOptions: { ...common, coerceTypes: body ? false : 'array' } }))
  // Fastify calls the compiler with a route definition, though the published type says a schema.
  const compile = (route: RouteDefinition) => {
    const body = (route.httpPart as string) === 'body'
    return once(`validator ${body} ${externals} ${schemaKey(route.schema)}`, () => {
      const validate = (ajvFor(body) as unknown as (route: RouteDefinition) => Validate)(route)
      return body ? validate : decimalNumbersOnly(route.schema, validate)
    })
  }
  return compile as unknown as Compile
}

type Validate = ((data: unknown) => boolean) & { errors?: unknown }

const FORMS: Record<string, { form: RegExp; what: string }> = {
  integer: { form: /^(0|-?[1-9]\d*)$/, what: 'an integer in decimal digits' },
  number: { form: /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/, what: 'a finite decimal number' }
}

// Ajv coerces whatever `+x` reads as a number ("0x10", " 5", "1e400" which passes `maximum`): a finite decimal only, an integer in digits.
function decimalNumbersOnly(schema: unknown, validate: Validate): Validate {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  const numeric = Object.entries(properties).flatMap(([name, { type }]) => (type === 'integer' || type === 'number' ? [{ name, ...FORMS[type]! }] : []))
  if (numeric.length === 0) return validate
  const checked: Validate = (data) => {
    for (const { name, form, what } of numeric) {
      const value = (data as Record<string, unknown> | undefined)?.[name]
      if (typeof value === 'string' && !(form.test(value) && Number.isFinite(Number(value)))) {
        checked.errors = [{ instancePath: `/${name}`, keyword: 'type', params: {}, message: `must be ${what}` }]
        return false
      }
    }
    const valid = validate(data)
    checked.errors = validate.errors
    return valid
  }
  return checked
}

const defaultSerializers = SerializerSelector()

export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const externals = externalsKey(externalSchemas)
  let compile: ReturnType<SerializerFactory> | undefined
  return (route) =>
    once(`serializer ${externals} ${schemaKey(route.schema)}`, () => {
      compile ??= defaultSerializers(externalSchemas, options)
      return compile(route)
    })
}
