import { duration, utc } from './format.js'
import type { StreamState } from './stream.js'
import { useNow } from './use-now.js'

/**
 * Says, as soon as the live stream is lost, that what the page shows may be out of date: since
 * when, and how old that is now (counted every second). The age is for the eye only, like the
 * stream's countdown: a status region that changed every second would talk over everything else.
 */
export function StaleNotice({ since, stream }: { since: number; stream: StreamState }) {
  const now = useNow(true)
  const age = duration(Math.max(0, Math.floor((now - since) / 1000)))
  const next = stream.kind === 'live' ? 'Live again: reading what was missed…' : 'It updates once the service answers again.'
  return (
    <p class="stale-notice" role="status">
      <strong>Not current.</strong> Data from {utc(since).slice(11)} UTC<span aria-hidden="true">, {age} old</span>. {next}
    </p>
  )
}
