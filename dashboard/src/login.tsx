import { useEffect, useRef, useState } from 'preact/hooks'
import { browserDeps } from './browser.js'
import { describe } from './errors.js'
import { Session } from './session.js'

interface LoginProps {
  /** Why the operator is here again (a session that ended), shown above the form. */
  notice: string | undefined
  onLogin: (session: Session) => void
}

export function Login({ notice, onLogin }: LoginProps) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const first = useRef<HTMLInputElement>(null)
  useEffect(() => first.current?.focus(), [])

  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(undefined)
    try {
      onLogin(await Session.login(browserDeps, username, password))
    } catch (failure) {
      setError(describe(failure))
      setBusy(false)
    }
  }

  return (
    <main class="login">
      <form class="login-form" method="post" onSubmit={(event) => void submit(event)} aria-describedby={error === undefined ? undefined : 'login-error'}>
        <h1>frb-tracer</h1>
        <p class="muted">Baseband callbacks, live: log in with your tracer account.</p>
        {notice !== undefined && <p class="notice" role="status">{notice}</p>}
        <label for="username">Username</label>
        <input
          id="username"
          ref={first}
          name="username"
          autocomplete="username"
          required
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <button type="submit" class="primary" aria-disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        {error !== undefined && (
          <p id="login-error" class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  )
}
