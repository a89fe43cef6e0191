import type { AuditSummary } from './api-types.js'
import type { Filters as FilterValues } from './grid-model.js'
import { STATE_LABELS, STATE_MARKS, type CellState } from './labels.js'

interface FiltersProps {
  summary: AuditSummary
  sites: readonly string[]
  filters: FilterValues
  onChange: (filters: FilterValues) => void
}

const VERDICTS: readonly CellState[] = ['contradiction', 'stuck', 'in_progress', 'complete']

/**
 * The audit's summary of the whole window, one tile per verdict; each tile is also the verdict
 * filter (radio buttons: arrow keys move between them). The site filter beside them.
 */
export function Filters({ summary, sites, filters, onChange }: FiltersProps) {
  const choose = (verdict: FilterValues['verdict']) => onChange({ ...filters, verdict })
  return (
    <section class="filters" aria-label="Summary and filters">
      <fieldset class="summary">
        <legend>Events by verdict (whole window); choose one to show only those</legend>
        <label class="tile tile-all">
          <input type="radio" name="verdict" value="all" checked={filters.verdict === 'all'} onChange={() => choose('all')} />
          <span class="count">{summary.events}</span>{' '}
          <span class="what">all events</span>
        </label>
        {VERDICTS.map((verdict) => (
          <label class={`tile tile-${verdict}`}>
            <input type="radio" name="verdict" value={verdict} checked={filters.verdict === verdict} onChange={() => choose(verdict)} />
            <span class="count">{summary[verdict]}</span>{' '}
            <span class="what">
              <span aria-hidden="true">{STATE_MARKS[verdict]} </span>
              {STATE_LABELS[verdict]}
            </span>
          </label>
        ))}
      </fieldset>
      <div class="site-filter">
        <label for="site">Site</label>
        <select id="site" value={filters.site} onChange={(e) => onChange({ ...filters, site: e.currentTarget.value })}>
          <option value="all">All sites</option>
          {sites.map((site) => (
            <option value={site}>{site}</option>
          ))}
        </select>
      </div>
    </section>
  )
}
