import type { AuditFinding } from '../../../schemas/audit.js'
import type { Heartbeat } from '../../../schemas/heartbeats.js'
import { details } from './details.js'
import { finding } from './rules.js'
import type { SiteFacts } from './site-facts.js'

/** The trace and the datatrail against what the site's heartbeats report. */
export function heartbeatFindings(facts: SiteFacts): AuditFinding[] {
  return [...fileCountMismatch(facts), ...heartbeatError(facts)]
}

/**
 * `file-count-mismatch`: the last finished heartbeat (highest id) counts other files than the
 * registered member. Unfinished heartbeats count files still arriving, so they prove nothing.
 */
function fileCountMismatch({ site, memberName, member, heartbeats }: SiteFacts): AuditFinding[] {
  if (!member.registered) return []
  const last = newest(heartbeats.filter((heartbeat) => heartbeat.received.finished_time !== null))
  if (last === undefined || last.received.total_data_files === member.num_files) return []
  return [
    finding(
      'file-count-mismatch',
      site,
      'data_registration',
      details.fileCountMismatch(site, last.heartbeat_id, last.received.total_data_files, memberName, member.num_files)
    )
  ]
}

/** `heartbeat-error`: conversion is complete, yet a heartbeat reported an error; names the newest such. */
function heartbeatError({ site, stages, heartbeats }: SiteFacts): AuditFinding[] {
  if (stages.baseband_conversion !== 'complete') return []
  const last = newest(heartbeats.filter((heartbeat) => (heartbeat.sent.error ?? '') !== ''))
  if (last === undefined) return []
  return [finding('heartbeat-error', site, 'baseband_conversion', details.heartbeatError(site, last.heartbeat_id, last.sent.error!))]
}

/** The heartbeat with the highest id: heartbeats arrive in any order. */
function newest(heartbeats: readonly Heartbeat[]): Heartbeat | undefined {
  let found: Heartbeat | undefined
  for (const heartbeat of heartbeats) {
    if (found === undefined || heartbeat.heartbeat_id > found.heartbeat_id) found = heartbeat
  }
  return found
}
