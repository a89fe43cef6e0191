import type { Document, Filter } from 'mongodb'
import { update as applyModifier } from 'mingo'
import { copyOf, isOperatorDocument, serverError } from './values.js'

const SUPPORTED = new Set(['$set', '$setOnInsert', '$push', '$min'])

const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`)

/**
 * Checks an update document as the server does before running it: operators only, known ones,
 * and no path named by two operators (code 40, "would create a conflict").
 */
export function checkUpdate(update: Document): void {
  if (!isOperatorDocument(update) || Object.keys(update).some((key) => !key.startsWith('$'))) {
    throw new Error('Update document requires atomic operators')
  }
  for (const operator of Object.keys(update)) {
    if (!SUPPORTED.has(operator)) throw new Error(`The mingo engine does not support the update operator ${operator}`)
  }
  const paths = Object.values(update).map((fields) => Object.keys(fields as Document))
  for (const [i, own] of paths.entries()) {
    for (const other of paths.slice(i + 1)) {
      const clash = own.find((path) => other.some((otherPath) => overlaps(path, otherPath)))
      if (clash !== undefined) {
        throw serverError(40, 'ConflictingUpdateOperators', `Updating the path '${clash}' would create a conflict at '${clash}'`)
      }
    }
  }
}

/**
 * `$push` of one value, or of several with `$each`, onto a top-level field, creating the array when
 * missing: the forms the adapter uses. Other modifiers (`$slice`, `$sort` ...) and nested paths are
 * refused; a field that is not an array is refused as the server refuses it (code 2).
 */
function push(document: Document, fields: Document): void {
  for (const [path, value] of Object.entries(fields)) {
    if (path.includes('.')) throw new Error('The mingo engine supports $push onto top-level fields only')
    const each = isOperatorDocument(value) ? (value as Document).$each : [value]
    if (!Array.isArray(each) || (isOperatorDocument(value) && Object.keys(value as Document).length !== 1)) {
      throw new Error('The mingo engine supports no $push modifier but $each')
    }
    const current: unknown = document[path]
    if (current !== undefined && !Array.isArray(current)) {
      throw serverError(2, 'BadValue', `The field '${path}' must be an array but is of type ${typeof current} in document {_id: ${String(document._id)}}`)
    }
    for (const item of each) applyModifier(document, { $push: { [path]: copyOf({ item }).item } })
  }
}

/** The updated copy of `document`; $setOnInsert applies only when the upsert inserts. */
export function applyUpdate(document: Document, update: Document, inserting: boolean): Document {
  const updated = copyOf(document)
  if (update.$set !== undefined) applyModifier(updated, { $set: copyOf(update.$set) })
  if (update.$push !== undefined) push(updated, update.$push as Document)
  // A missing path is set to the value; an existing one only lowered (values of one type, as the adapter gives).
  if (update.$min !== undefined) applyModifier(updated, { $min: copyOf(update.$min) })
  if (inserting && update.$setOnInsert !== undefined) applyModifier(updated, { $set: copyOf(update.$setOnInsert) })
  return updated
}

/** The document an upsert starts from: the filter's top-level equality fields, as on the server. */
export function upsertSeed(filter: Filter<Document>): Document {
  const seed: Document = {}
  for (const [key, value] of Object.entries(filter)) {
    if (!key.startsWith('$') && !isOperatorDocument(value)) seed[key] = value
  }
  return copyOf(seed)
}

export function checkReplacement(replacement: Document): void {
  if (Object.keys(replacement).some((key) => key.startsWith('$'))) {
    throw new Error('Replacement document must not contain atomic operators')
  }
}
