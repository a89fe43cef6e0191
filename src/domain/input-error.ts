/**
 * Input that breaks a rule of the domain: names the field (a path, such as `['timestamp_utc']`) and
 * says why. Where the input came from (a query, a body, a line of a file) is for whoever read it to
 * add, so the same rule reads right on the wire and in the command-line tool.
 */
export class InputError extends Error {
  override name = 'InputError'

  constructor(
    readonly field: readonly (string | number)[],
    readonly reason: string
  ) {
    super(`${field.join('.')} ${reason}`)
  }
}

/** A field path as people read it: `actions.want.Baseband`, `[3].snr`. */
export const fieldText = (path: readonly (string | number)[]) =>
  path.map((segment, index) => (typeof segment === 'number' || /^\d+$/.test(segment) ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('')
