import type { StreamState } from './stream.js'
import { useNow } from './use-now.js'

const WORDS = { live: 'Live', connecting: 'Connecting…', waiting: 'Reconnecting', stopped: 'Not live' } as const

/**
 * The live stream's state in words. The countdown to the next attempt is for the eye only: a
 * status region that changed every second would talk over everything else.
 */
export function StreamStatus({ state }: { state: StreamState }) {
  const now = useNow(state.kind === 'waiting')

  const detail =
    state.kind === 'live'
      ? 'writes show here within seconds.'
      : state.kind === 'waiting'
        ? state.reason
        : state.kind === 'connecting'
          ? 'opening the live stream.'
          : 'the live stream is closed.'
  return (
    <div class={`stream stream-${state.kind}`} title={`${WORDS[state.kind]}: ${detail}`}>
      <span class="dot" aria-hidden="true" />
      <span role="status">
        {WORDS[state.kind]}
        <span class="visually-hidden">: {detail}</span>
      </span>
      {state.kind === 'waiting' && (
        <span aria-hidden="true" class="stream-countdown"> in {Math.max(0, Math.ceil((state.retryAt - now) / 1000))} s</span>
      )}
    </div>
  )
}
