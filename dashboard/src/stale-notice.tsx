import { duration, utc } from './format.js'
import type { StreamState } from './stream.js'
import type { StreamFailure } from './use-tracer.js'
import { useNow } from './use-now.js'

/** Why the page cannot follow the service, in words: a tooltip or hidden text is missed by the eye that needs it. */
function why(failure: StreamFailure | undefined): string {
  if (failure === undefined) return 'The service cannot be reached.'
  switch (failure.outage) {
    case 'unreachable':
      return 'The service cannot be reached.'
    case 'closed':
      return 'The service closed the live stream.'
    case 'signed-out':
      return 'Signed out: the service no longer accepts this session.'
    default:
      // A 503 says what is away (the store, most often) in the service's own words.
      return failure.reason
  }
}

interface StaleNoticeProps {
  since: number
  stream: StreamState
  failure: StreamFailure | undefined
  onLogIn: () => void
}

/**
 * Says, as soon as the live stream is lost, that what the page shows may be out of date: since
 * when, how long ago (counted every second) and why. The age is for the eye only, like the stream's
 * countdown: a status region that changed every second would talk over everything else.
 */
export function StaleNotice({ since, stream, failure, onLogIn }: StaleNoticeProps) {
  const now = useNow(true)
  const age = duration(Math.max(0, Math.floor((now - since) / 1000)))
  const live = stream.kind === 'live'
  const signedOut = !live && failure?.outage === 'signed-out'
  return (
    <p class="stale-notice" role="status">
      <strong>
        Not current.{!live && <span class="stale-reason"> {why(failure)}</span>}
      </strong>{' '}
      Since {utc(since).slice(11)} UTC<span aria-hidden="true"> ({age} ago)</span>.{' '}
      {live ? (
        'Live again: reading what was missed…'
      ) : signedOut ? (
        <button type="button" class="stale-action" onClick={onLogIn}>
          Log in again
        </button>
      ) : (
        'It updates once the service answers again.'
      )}
    </p>
  )
}
