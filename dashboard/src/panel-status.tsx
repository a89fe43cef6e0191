import type { AuditedEvent, EventStatus, StageStatus } from './api-types.js'
import { cellOf } from './cells.js'
import { shortUtc } from './format.js'
import { STAGES } from './grid-model.js'
import { STAGE_LABELS, STATE_LABELS, STATE_MARKS } from './labels.js'
import { stageKey } from '../../src/vocabulary.js'

/** The datatrail member of a site: `{site}_baseband`, or plain `baseband` at the primary site. */
const memberOf = (status: EventStatus, site: string) => status.datatrail[`${site}_baseband`] ?? status.datatrail['baseband']

/** Each requested site's four stages as event status reads them, held against the audit's findings. */
export function SiteStages({ audit, status }: { audit: AuditedEvent; status: EventStatus }) {
  const trace = status.trace as Record<string, StageStatus | number>
  return (
    <section aria-labelledby="sites-title">
      <h3 id="sites-title">Stages</h3>
      <div class="table-frame">
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Site</th>
              {STAGES.map((stage) => (
                <th scope="col">{STAGE_LABELS[stage]}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {audit.sites.map((site) => (
              <tr>
                <th scope="row">{site}</th>
                {STAGES.map((stage) => {
                  const { state } = cellOf(audit.findings, site, stage, trace[stageKey(stage, site)] as StageStatus | undefined)
                  return (
                    <td class={`state state-${state}`}>
                      <span aria-hidden="true">{STATE_MARKS[state]} </span>
                      {STATE_LABELS[state]}
                    </td>
                  )
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}

/** What the datatrail holds for each requested site's baseband data. */
export function Datatrail({ audit, status }: { audit: AuditedEvent; status: EventStatus }) {
  return (
    <section aria-labelledby="datatrail-title">
      <h3 id="datatrail-title">Datatrail</h3>
      <div class="table-frame">
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Site</th>
              <th scope="col">Registered</th>
              <th scope="col">Due at archive</th>
              <th scope="col" class="num">Files</th>
              <th scope="col" class="num">Missing</th>
            </tr>
          </thead>
          <tbody>
            {audit.sites.map((site) => {
              const member = memberOf(status, site)
              return (
                <tr>
                  <th scope="row">{site}</th>
                  <td>{member?.registered === true ? 'yes' : 'no'}</td>
                  <td>{member?.should_be_at_minoc === true ? 'yes' : 'no'}</td>
                  <td class="num">{member?.num_files ?? 0}</td>
                  <td class="num">{member?.missing_files.length ?? 0}</td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
    </section>
  )
}

/** The heartbeats the sites sent back, by heartbeat_id: the first thousand of `total`. */
export function Heartbeats({ status, total }: { status: EventStatus; total: number }) {
  const shown = status.heartbeats.length
  return (
    <section aria-labelledby="heartbeats-title">
      <h3 id="heartbeats-title">Heartbeats ({shown < total ? `${total}; the first ${shown} shown` : shown})</h3>
      {status.heartbeats.length === 0 ? (
        <p class="muted">No site has sent a heartbeat for this event.</p>
      ) : (
        <div class="table-frame">
          <table class="compact">
            <thead>
              <tr>
                <th scope="col">Site</th>
                <th scope="col">Triggered (UTC)</th>
                <th scope="col">Finished (UTC)</th>
                <th scope="col" class="num">Files</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {status.heartbeats.map((heartbeat) => (
                <tr>
                  <th scope="row">{heartbeat.site}</th>
                  <td class="when">{shortUtc(heartbeat.sent.trigger_time)}</td>
                  <td class="when">{heartbeat.received.finished_time === null ? 'not finished' : shortUtc(heartbeat.received.finished_time)}</td>
                  <td class="num">{heartbeat.received.total_data_files}</td>
                  <td class={heartbeat.sent.error === null ? 'wrap muted' : 'wrap error-text'}>{heartbeat.sent.error ?? 'none'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
