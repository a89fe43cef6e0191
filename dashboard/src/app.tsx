import { useState } from 'preact/hooks'
import { Dashboard } from './dashboard.js'
import { Login } from './login.js'
import type { Session } from './session.js'

/** The login form until there is a session; the dashboard while there is one. Tokens live only here. */
export function App() {
  const [session, setSession] = useState<Session | undefined>()
  const [notice, setNotice] = useState<string | undefined>()

  if (session === undefined) {
    return <Login notice={notice} onLogin={(started) => (setNotice(undefined), setSession(started))} />
  }
  const end = (message?: string) => {
    session.logout()
    setNotice(message)
    setSession(undefined)
  }
  return <Dashboard session={session} onEnd={end} />
}
