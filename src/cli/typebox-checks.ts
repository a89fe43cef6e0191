import { FormatRegistry, TypeRegistry, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'

/*
 * The route schemas are written for Ajv (the server's validator). TypeBox's own checker needs two
 * things taught before it can check them: StringEnum's schemas have the kind "Unsafe", which TypeBox
 * cannot check by itself, and it rejects every string of a format it has not been told about.
 */
if (!TypeRegistry.Has('Unsafe')) {
  TypeRegistry.Set<{ enum?: unknown }>('Unsafe', (schema, value) => Array.isArray(schema.enum) && schema.enum.includes(value))
}
// RFC 3339 date-time with a time zone, as Ajv's date-time format accepts it (leap seconds aside).
const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|[+-](\d\d):?(\d\d))$/
if (!FormatRegistry.Has('date-time')) {
  FormatRegistry.Set('date-time', (text) => {
    const match = DATE_TIME.exec(text)
    if (match === null) return false
    const [year, month, day, hour, minute, second, zoneHours, zoneMinutes] = match.slice(1).map((part) => Number(part ?? 0))
    const date = new Date(Date.UTC(year!, month! - 1, day!))
    return (
      date.getUTCMonth() === month! - 1 &&
      date.getUTCDate() === day! &&
      hour! <= 23 &&
      minute! <= 59 &&
      second! <= 59 &&
      zoneHours! <= 23 &&
      zoneMinutes! <= 59
    )
  })
}

/** A compiled check: undefined when `value` fits the schema, else its first error as one line. */
export type Checker = (value: unknown) => string | undefined

/** `references` are the schemas that `schema` refers to by $id (the ones ref() points at). */
export function checker(schema: TSchema, references: TSchema[] = []): Checker {
  const compiled = TypeCompiler.Compile(schema, references)
  return (value) => {
    if (compiled.Check(value)) return undefined
    const error = compiled.Errors(value).First()
    if (error === undefined) return 'does not fit the schema'
    const where = error.path === '' ? 'record' : error.path.slice(1).replaceAll('/', '.')
    const allowed = (error.schema as { enum?: unknown }).enum
    return Array.isArray(allowed) ? `${where} must be one of ${allowed.join(', ')}` : `${where}: ${error.message}`
  }
}
