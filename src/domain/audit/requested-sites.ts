import type { Sites } from '../../vocabulary.js'
import { actionsOutput } from '../events.js'
import type { EventRecord } from '../records.js'

/** The configured sites an event asked for baseband data from, in configured order; only boolean `true` asks (other writers). */
export function requestedSites(actions: EventRecord['actions'], sites: Sites): string[] {
  const want = actionsOutput(actions, sites).want
  return sites.names.filter((site) => want[sites.basebandKeyOf(site)] === true)
}
