import type { AuditFinding } from './api-types.js'
import { RULE_LABELS, STATE_LABELS, STATE_MARKS, placeOf } from './labels.js'

/** The audit's findings for the event, in its order (by site, then stage), or a word that there are none. */
export function Findings({ findings }: { findings: readonly AuditFinding[] }) {
  return (
    <section aria-labelledby="findings-title">
      <h3 id="findings-title">Findings ({findings.length})</h3>
      {findings.length === 0 ? (
        <p class="muted">No check failed: the trace agrees with the datatrail, the heartbeats and the deadlines.</p>
      ) : (
        <ul class="findings">
          {findings.map((finding) => (
            <li>
              <span class={`chip state-${finding.severity}`}>
                <span aria-hidden="true">{STATE_MARKS[finding.severity]} </span>
                {STATE_LABELS[finding.severity]}
              </span>{' '}
              <strong>{placeOf(finding.site, finding.stage)}</strong> — {RULE_LABELS[finding.rule]}: {finding.detail}.
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
