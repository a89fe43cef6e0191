/**
 * Names derived from the configured sites. The first site is the primary one: its baseband data is
 * plain `baseband`, the others' `{site}_baseband` (in actions and in the datatrail).
 */
interface SiteNames {
  basebandKeys: readonly string[]
  dataProducts: readonly string[]
}

/** Derived once per site list: per-event output code asks for them on every event. */
const derived = new WeakMap<readonly string[], SiteNames>()

function namesOf(sites: readonly string[]): SiteNames {
  let names = derived.get(sites)
  if (names === undefined) {
    const basebandKeys = Object.freeze(['baseband', ...sites.slice(1).map((site) => `${site}_baseband`)])
    names = { basebandKeys, dataProducts: Object.freeze(['intensity', ...basebandKeys]) }
    derived.set(sites, names)
  }
  return names
}

export const basebandKeys = (sites: readonly string[]) => namesOf(sites).basebandKeys

/** The members of an event's actions (`want`, `got`) and of its datatrail. */
export const dataProducts = (sites: readonly string[]) => namesOf(sites).dataProducts
