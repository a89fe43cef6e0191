import type { AccessTokenResponse, TokenPair } from './api-types.js'
import { apiError, SessionEnded } from './errors.js'

/** What a session needs from the outside world: injected so the unit tests can drive it. */
export interface SessionDeps {
  fetch: typeof fetch
  /** ms since the epoch. */
  now: () => number
}

/** How long before expiry a token is refreshed: a minute, or a quarter of a short lifetime. */
const MARGIN_MS = 60_000

interface AccessToken {
  token: string
  /** Local clock time at which to refresh: lifetime from the claims, counted from receipt. */
  refreshAt: number
}

/**
 * exp − iat of the token, in ms, counted from when we received it: the lifetime does not depend on
 * the browser's clock agreeing with the server's. Undefined when the claims cannot be read; the
 * session then relies on the 401 fallback alone.
 */
export function lifetimeMs(token: string): number | undefined {
  try {
    const payload = token.split('.')[1] ?? ''
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'))
    const { exp, iat } = JSON.parse(json) as { exp?: unknown; iat?: unknown }
    return typeof exp === 'number' && typeof iat === 'number' && exp > iat ? (exp - iat) * 1000 : undefined
  } catch {
    return undefined
  }
}

/**
 * Tokens in memory only, used as the Python client uses them: the raw access token as the
 * Authorization header; refreshed ahead of its expiry, and on a 401 by POST /auth/refresh with the
 * old access token in Authorization and the refresh token in the body, then the call is retried once.
 */
export class Session {
  private access: AccessToken | undefined
  private refreshToken: string | undefined
  private refreshing: Promise<void> | undefined

  constructor(
    private readonly deps: SessionDeps,
    readonly username: string,
    pair: TokenPair
  ) {
    this.access = this.received(pair.access_token)
    this.refreshToken = pair.refresh_token
  }

  /** POST /auth; rejects with the service's reasons when refused. */
  static async login(deps: SessionDeps, username: string, password: string): Promise<Session> {
    const response = await deps.fetch('/auth', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password })
    })
    if (!response.ok) throw await apiError(response)
    return new Session(deps, username, (await response.json()) as TokenPair)
  }

  get active(): boolean {
    return this.access !== undefined
  }

  /** Forgets both tokens; every later call rejects with SessionEnded. */
  logout(): void {
    this.access = undefined
    this.refreshToken = undefined
  }

  /** A call with the access token, refreshed first when due, and once more after a 401. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    if (this.access !== undefined && this.deps.now() >= this.access.refreshAt) await this.refresh(this.access.token)
    const sent = this.current()
    const response = await this.deps.fetch(path, withToken(init, sent))
    if (response.status !== 401) return response
    await this.refresh(sent)
    return this.deps.fetch(path, withToken(init, this.current()))
  }

  /** GET a JSON document; a non-2xx answer rejects with its envelope. */
  async json<T>(path: string, signal?: AbortSignal): Promise<T> {
    return (await this.jsonWithHeaders<T>(path, signal)).body
  }

  /** The body and the headers, for reads whose headers say more (how many there are in all). */
  async jsonWithHeaders<T>(path: string, signal?: AbortSignal): Promise<{ body: T; headers: Headers }> {
    const response = await this.fetch(path, signal === undefined ? {} : { signal })
    if (!response.ok) throw await apiError(response)
    return { body: (await response.json()) as T, headers: response.headers }
  }

  private current(): string {
    if (this.access === undefined) throw new SessionEnded('You have logged out.')
    return this.access.token
  }

  private received(token: string): AccessToken {
    const lifetime = lifetimeMs(token)
    const margin = lifetime === undefined ? 0 : Math.min(MARGIN_MS, lifetime / 4)
    return { token, refreshAt: lifetime === undefined ? Infinity : this.deps.now() + lifetime - margin }
  }

  /**
   * One refresh at a time: calls that find the token due, or refused, while a refresh runs wait for
   * it. A token replaced since `stale` was sent needs no refresh of its own.
   */
  private async refresh(stale: string): Promise<void> {
    if (this.access !== undefined && this.access.token !== stale) return
    this.refreshing ??= this.exchange(stale).finally(() => (this.refreshing = undefined))
    return this.refreshing
  }

  private async exchange(stale: string): Promise<void> {
    const refreshToken = this.refreshToken
    if (refreshToken === undefined) throw new SessionEnded('You have logged out.')
    const response = await this.deps.fetch('/auth/refresh', {
      method: 'POST',
      headers: { authorization: stale, 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken })
    })
    if (response.status === 401) {
      const refused = await apiError(response)
      this.logout()
      throw new SessionEnded(`Your session has ended: ${refused.message} Log in again.`)
    }
    if (!response.ok) throw await apiError(response)
    // Logged out while the refresh was under way: the new token is not kept.
    if (this.refreshToken !== refreshToken) throw new SessionEnded('You have logged out.')
    this.access = this.received(((await response.json()) as AccessTokenResponse).access_token)
  }
}

function withToken(init: RequestInit, token: string): RequestInit {
  const headers = new Headers(init.headers)
  headers.set('authorization', token)
  return { ...init, headers }
}
