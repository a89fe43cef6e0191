import type { ErrorEnvelope, Exception } from '../schemas/common.js'

/** An error the service means to answer with: a status and the envelope of CONTRACT section 1. */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly exception: Exception,
    readonly reasons: string[]
  ) {
    super(reasons.join(' '))
    this.name = 'AppError'
  }

  get envelope(): ErrorEnvelope {
    return { reasons: this.reasons, exception: this.exception }
  }
}

export const badRequest = (reason: string) => new AppError(400, 'BadRequest', [reason])
export const notFound = (reason: string) => new AppError(404, 'NotFound', [reason])
export const forbidden = (reason: string) => new AppError(403, 'Forbidden', [reason])
export const invalidToken = (reason: string) => new AppError(401, 'InvalidToken', [reason])
export const authenticationFailed = (reason: string) => new AppError(401, 'AuthenticationFailed', [reason])
export const serviceUnavailable = (reason: string) => new AppError(503, 'ServiceUnavailable', [reason])

const AUTHORIZATION_ABSENT = 'Authorization header not present.'
/** No token: 400 on `/auth/verify` (the interface document), 401 everywhere else. */
export const authorizationAbsent = (statusCode: 400 | 401 = 401) =>
  new AppError(statusCode, 'Unauthorized', [AUTHORIZATION_ABSENT])
