import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { sharedSchemas } from '../../schemas/index.js'
import { SITES } from './fixtures.js'

// The server's validator (Ajv) with every shared component, as routes will see them.
const ajv = new Ajv({ strict: false, allErrors: true })
addFormats.default(ajv)
for (const schema of sharedSchemas(SITES)) ajv.addSchema(schema)

/** Why `value` is not a valid `$id` shape; '' when it is. */
export function wireErrors(id: string, value: unknown): string {
  const validate = ajv.getSchema(id)
  if (validate === undefined) throw new Error(`no schema ${id}`)
  return validate(value) ? '' : ajv.errorsText(validate.errors)
}
