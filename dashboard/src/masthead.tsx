import { useLayoutEffect, useRef } from 'preact/hooks'
import { StaleNotice } from './stale-notice.js'
import type { StreamState } from './stream.js'
import { StreamStatus } from './stream-status.js'
import type { StreamFailure } from './use-tracer.js'

interface MastheadProps {
  username: string
  stream: StreamState
  staleSince: number | undefined
  lastFailure: StreamFailure | undefined
  onLogOut: () => void
}

/**
 * The page's header, and under it the notice that the data is not current: sticky, so the state
 * stays in view however far the operator has scrolled. Its height goes to `--masthead-height`, so
 * that the event panel, sticky too, starts below it.
 */
export function Masthead({ username, stream, staleSince, lastFailure, onLogOut }: MastheadProps) {
  const box = useRef<HTMLDivElement>(null)
  useLayoutEffect(() => {
    const element = box.current!
    const root = document.documentElement.style
    const measure = new ResizeObserver(() => root.setProperty('--masthead-height', `${element.offsetHeight}px`))
    measure.observe(element)
    return () => {
      measure.disconnect()
      root.removeProperty('--masthead-height')
    }
  }, [])
  return (
    <div class="masthead" ref={box}>
      <header class="top">
        <h1>
          frb-tracer <span class="muted subtitle">· baseband callbacks</span>
        </h1>
        <StreamStatus state={stream} />
        <span class="who">
          <span class="who-label">Logged in as </span>
          <strong>{username}</strong>
        </span>
        <button type="button" onClick={onLogOut}>
          Log out
        </button>
      </header>
      {staleSince !== undefined && (
        <StaleNotice since={staleSince} stream={stream} failure={lastFailure} onLogIn={onLogOut} />
      )}
    </div>
  )
}
