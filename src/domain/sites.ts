/**
 * Names derived from the configured sites. The first site is the primary one: its baseband data is
 * plain `baseband`, the others' `{site}_baseband` (in actions and in the datatrail).
 */
export function basebandKeys(sites: readonly string[]): string[] {
  return ['baseband', ...sites.slice(1).map((site) => `${site}_baseband`)]
}

/** The members of an event's actions (`want`, `got`) and of its datatrail. */
export const dataProducts = (sites: readonly string[]) => ['intensity', ...basebandKeys(sites)]
