import { AjvCompiler, type BuildCompilerFromPool, type RouteDefinition } from '@fastify/ajv-compiler'
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler'

/**
 * Compiled validators and serializers, one per distinct schema and shared by every app this process
 * builds. Routes declare the same error envelope for many statuses and tests build hundreds of
 * apps: compiling each schema once leaves an app's start-up after the first next to nothing to compile.
 */
const compiled = new Map<string, unknown>()

function once<T>(key: string, build: () => T): T {
  let value = compiled.get(key) as T | undefined
  if (value === undefined) {
    value = build()
    compiled.set(key, value)
  }
  return value
}

/**
 * The shared schemas' JSON as a short number in the keys above: a copy of that JSON in every key
 * would hold heap for as long as the process lived.
 */
const externalsIds = new Map<string, number>()

function externalsKey(externalSchemas: unknown): string {
  const json = JSON.stringify(externalSchemas)
  let id = externalsIds.get(json)
  if (id === undefined) {
    id = externalsIds.size
    externalsIds.set(json, id)
  }
  return `#${id}`
}

/** A schema's identity for compilation: its top-level description changes nothing compiled. */
function schemaKey(schema: unknown): string {
  if (schema === null || typeof schema !== 'object') return JSON.stringify(schema)
  const { description: _description, ...rest } = schema as Record<string, unknown>
  return JSON.stringify(rest)
}

/*
 * Never `removeAdditional`: it would drop a misspelled body member (`actions.want.Baseband`) and
 * answer 200. A body schema says `additionalProperties: false` and an unknown member is a 400;
 * query schemas leave additional properties open, so unknown query parameters pass untouched.
 */
const common = { useDefaults: true, removeAdditional: false, allErrors: false } as const
type Compile = ReturnType<BuildCompilerFromPool>

/**
 * Two Ajv instances: the URL's parts (query, path) are strings on the wire and are coerced to the
 * schema's types; JSON bodies are typed already and are not, so `{"event": "12"}` or `true` where an
 * integer belongs is a 400 rather than a silently coerced number.
 */
export const buildValidator: BuildCompilerFromPool = (externalSchemas, options) => {
  const externals = externalsKey(externalSchemas)
  const plugins = options?.plugins ?? []
  // An Ajv instance costs milliseconds to create: only make one when a schema is not compiled yet.
  const ajvFor = (body: boolean) =>
    once(`ajv ${body} ${externals}`, () =>
      AjvCompiler()(externalSchemas, { plugins, customOptions: { ...common, coerceTypes: body ? false : 'array' } })
    )
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

const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/
/** An integer as people write one: no sign on zero, no leading zeros, no fraction or exponent. */
const DECIMAL_INTEGER = /^(0|-?[1-9]\d*)$/

/**
 * Ajv coerces any text `+x` reads as a number: "0x10", " 5", "Infinity", and "1e400" (which is
 * Infinity and then passes `maximum`). A numeric query or path value must be a finite decimal, and
 * an integer one plain digits: "1e3", "01" and "12.0" name the same number only to a coercing validator.
 */
function decimalNumbersOnly(schema: unknown, validate: Validate): Validate {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  const numeric = Object.entries(properties).flatMap(([name, property]) =>
    property.type === 'integer' ? [{ name, form: DECIMAL_INTEGER, what: 'an integer in decimal digits' }] : property.type === 'number' ? [{ name, form: DECIMAL, what: 'a finite decimal number' }] : []
  )
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
