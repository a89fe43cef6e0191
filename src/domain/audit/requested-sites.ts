import type { Sites } from '../../vocabulary.js'
import { actionsOutput } from '../events.js'
import type { EventRecord } from '../records.js'

/**
 * The sites an event asked for baseband data from, in configured order: the primary site for
 * `want.baseband`, any other site for `want.{site}_baseband`. A flag naming a site that is not
 * configured asks for nothing, and only boolean `true` asks (events may come from other writers).
 */
export function requestedSites(actions: EventRecord['actions'], sites: Sites): string[] {
  const want = actionsOutput(actions, sites).want
  return sites.names.filter((site) => want[sites.basebandKeyOf(site)] === true)
}
