import type { AuditFinding } from '../../../schemas/audit.js'
import { details } from './details.js'
import { finding } from './findings.js'
import type { SiteFacts } from './site-facts.js'

/** The trace against the site's datatrail member: registration and replication must agree with it. */
export function datatrailFindings({ site, memberName, member, stages }: SiteFacts): AuditFinding[] {
  const findings: AuditFinding[] = []
  if (stages.data_registration === 'complete' && !member.registered) {
    findings.push(
      finding('registered-not-in-datatrail', site, 'data_registration', details.registeredNotInDatatrail(site, memberName))
    )
  }
  if (member.registered && stages.data_registration === 'incomplete') {
    findings.push(finding('datatrail-not-in-trace', site, 'data_registration', details.datatrailNotInTrace(site, memberName)))
  }
  if (stages.data_replication_to_minoc === 'complete' && member.missing_files > 0) {
    findings.push(
      finding(
        'replicated-with-missing-files',
        site,
        'data_replication_to_minoc',
        details.replicatedWithMissingFiles(site, memberName, member.missing_files)
      )
    )
  }
  return findings
}
