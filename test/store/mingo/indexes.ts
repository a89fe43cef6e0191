import type { Document, IndexDescription } from 'mongodb'
import { serverError } from './values.js'

interface UniqueIndex {
  name: string
  fields: string[]
}

/**
 * The indexes of one collection. Only unique ones change behaviour here (the others only speed up a
 * server), so they are recorded and the unique ones enforced: a missing field counts as null.
 */
export class Indexes {
  private readonly names = new Set<string>()
  private readonly unique: UniqueIndex[] = []

  constructor(private readonly namespace: string) {}

  /** Whether any index was created: a collection with one exists on a server, even empty. */
  get any(): boolean {
    return this.names.size > 0
  }

  /** Adds the indexes not there yet, refusing a unique one the stored documents already break. */
  create(descriptions: IndexDescription[], documents: Document[]): string[] {
    return descriptions.map((description) => {
      const unknownOptions = Object.keys(description).filter((option) => !['key', 'unique', 'name', 'partialFilterExpression'].includes(option))
      if (unknownOptions.length > 0) throw new Error(`The mingo engine does not support index options ${unknownOptions.join(', ')}`)
      const key = description.key as Record<string, number>
      const fields = Object.keys(key)
      if (fields.some((field) => field.includes('.'))) throw new Error('The mingo engine supports top-level index keys only')
      const name = description.name ?? fields.map((field) => `${field}_${key[field]}`).join('_')
      if (this.names.has(name)) return name
      if (description.unique === true) {
        const index = { name, fields }
        documents.forEach((document, position) => this.check(document, documents, position, index))
        this.unique.push(index)
      }
      this.names.add(name)
      return name
    })
  }

  /** Throws E11000 when `document` (to be stored at `position`, or appended) repeats a unique key. */
  checkAll(document: Document, documents: Document[], position: number): void {
    for (const index of this.unique) this.check(document, documents, position, index)
  }

  private check(document: Document, documents: Document[], position: number, index: UniqueIndex): void {
    const key = keyOf(document, index.fields)
    if (!documents.some((other, at) => at !== position && keyOf(other, index.fields) === key)) return
    const keyValue = Object.fromEntries(index.fields.map((field) => [field, document[field] ?? null]))
    throw serverError(
      11000,
      'DuplicateKey',
      `E11000 duplicate key error collection: ${this.namespace} index: ${index.name} dup key: ${JSON.stringify(keyValue)}`,
      { keyPattern: Object.fromEntries(index.fields.map((field) => [field, 1])), keyValue }
    )
  }
}

const keyOf = (document: Document, fields: string[]) => JSON.stringify(fields.map((field) => document[field] ?? null))
