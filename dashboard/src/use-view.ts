import { useEffect, useState } from 'preact/hooks'
import { queryOfView, sameChoice, viewOfQuery, type View } from './view-url.js'

/**
 * The view, kept in the address bar's query string so that a link opens it: each change the
 * operator makes is a history entry (pushState), and Back and Forward bring the one they reach.
 * The window choice keeps its identity when only the filters or the event change, so that the
 * window is not read again for them.
 */
export function useView(): [View, (next: View) => void] {
  const [view, setView] = useState(() => viewOfQuery(location.search))
  const keepChoice = (next: View) => (current: View) => (sameChoice(current.choice, next.choice) ? { ...next, choice: current.choice } : next)

  useEffect(() => {
    const restore = () => setView(keepChoice(viewOfQuery(location.search)))
    addEventListener('popstate', restore)
    return () => removeEventListener('popstate', restore)
  }, [])

  const go = (next: View) => {
    const query = queryOfView(next)
    if (query !== location.search) history.pushState(null, '', query === '' ? location.pathname : query)
    setView(keepChoice(next))
  }
  return [view, go]
}
