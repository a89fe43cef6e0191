/** Input that breaks a rule: names the field and says why; whoever read the input adds where it came from. */
export class InputError extends Error {
  override name = 'InputError'

  constructor(
    readonly field: readonly (string | number)[],
    readonly reason: string
  ) {
    super(`${fieldText(field)} ${reason}`)
  }
}

/** Segments shown at each end of a path too deep to name whole (a body nested 100,000 levels deep). */
const SHOWN_AT_EACH_END = 5

/** A field path as people read it: `actions.want.Baseband`, `[3].snr`; the middle of a very deep path is counted, not spelled out. */
export function fieldText(path: readonly (string | number)[]): string {
  const text = (segments: readonly (string | number)[], first: boolean) =>
    segments.map((segment, index) => (typeof segment === 'number' || /^\d+$/.test(segment) ? `[${segment}]` : first && index === 0 ? segment : `.${segment}`)).join('')
  if (path.length <= 3 * SHOWN_AT_EACH_END) return text(path, true)
  const hidden = path.length - 2 * SHOWN_AT_EACH_END
  return `${text(path.slice(0, SHOWN_AT_EACH_END), true)} (${hidden} levels more) ${text(path.slice(-SHOWN_AT_EACH_END), false)}`
}
