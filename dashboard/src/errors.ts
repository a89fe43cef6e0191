import type { ErrorEnvelope } from './api-types.js'

/** A non-2xx answer of the service, with the envelope's reasons when it sent one. */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    readonly reasons: readonly string[],
    readonly exception: string | undefined
  ) {
    super(reasons.join(' '))
  }
}

/** The tokens are gone: refused by the service, or forgotten by logging out. Log in again. */
export class SessionEnded extends Error {
  override name = 'SessionEnded'
}

/** The error envelope of a failed response, or a plain reason when the body is something else. */
export async function apiError(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as Partial<ErrorEnvelope>
    if (Array.isArray(body.reasons)) return new ApiError(response.status, body.reasons, body.exception)
  } catch {
    // Not JSON: a proxy's page, a dropped connection. The status says what we know.
  }
  return new ApiError(response.status, [`The service answered ${response.status} ${response.statusText}`.trim() + '.'], undefined)
}

/** A sentence for the operator, whatever was thrown. */
export function describe(error: unknown): string {
  if (error instanceof ApiError || error instanceof SessionEnded) return error.message
  if (error instanceof TypeError) return 'The service cannot be reached (network error).'
  return error instanceof Error ? error.message : String(error)
}

/**
 * Why the service's data cannot be had, as the page can tell it: no answer at all (a network error),
 * an answer of 503 (the service is up; its store, most often, is not), or of 401 (the service no
 * longer accepts this session), or another failure, said as `describe` says it.
 */
export type Outage = 'unreachable' | 'unavailable' | 'signed-out' | 'failed'

export function outageOf(error: unknown): Outage {
  if (error instanceof TypeError) return 'unreachable'
  if (error instanceof ApiError && error.status === 503) return 'unavailable'
  if (error instanceof SessionEnded || (error instanceof ApiError && error.status === 401)) return 'signed-out'
  return 'failed'
}
