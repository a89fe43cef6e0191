import type { StoredEvent } from '../../store/port.js'
import { actionsOutput } from '../events.js'
import { basebandKeys } from '../sites.js'

/**
 * The sites an event asked for baseband data from, in configured order: the primary site for
 * `want.baseband`, any other site for `want.{site}_baseband`. A flag naming a site that is not
 * configured asks for nothing, and only boolean `true` asks (events may come from other writers).
 */
export function requestedSites(actions: StoredEvent['actions'], sites: readonly string[]): string[] {
  const want = actionsOutput(actions, sites).want
  const keys = basebandKeys(sites)
  return sites.filter((_, index) => want[keys[index]!] === true)
}

/** The datatrail member holding a site's baseband data: `baseband` at the primary site. */
export const basebandMember = (site: string, sites: readonly string[]) => basebandKeys(sites)[sites.indexOf(site)]!
