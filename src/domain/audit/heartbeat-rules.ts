import type { AuditFinding } from '../../../schemas/audit.js'
import { details } from './details.js'
import { finding } from './findings.js'
import type { SiteFacts } from './site-facts.js'

/** The trace and the datatrail against what the site's heartbeats report. */
export function heartbeatFindings(facts: SiteFacts): AuditFinding[] {
  return [...fileCountMismatch(facts), ...heartbeatError(facts)]
}

/**
 * `file-count-mismatch`: the last finished heartbeat (highest id) counts other files than the
 * registered member. Unfinished heartbeats count files still arriving, so they prove nothing.
 */
function fileCountMismatch({ site, memberName, member, last_finished: last }: SiteFacts): AuditFinding[] {
  if (!member.registered || last === null || last.total_data_files === member.num_files) return []
  return [
    finding(
      'file-count-mismatch',
      site,
      'data_registration',
      details.fileCountMismatch(site, last.heartbeat_id, last.total_data_files, memberName, member.num_files)
    )
  ]
}

/** `heartbeat-error`: conversion is complete, yet a heartbeat reported an error; names the newest such. */
function heartbeatError({ site, stages, last_error: last }: SiteFacts): AuditFinding[] {
  if (stages.baseband_conversion !== 'complete' || last === null) return []
  return [finding('heartbeat-error', site, 'baseband_conversion', details.heartbeatError(site, last.heartbeat_id, last.error))]
}
