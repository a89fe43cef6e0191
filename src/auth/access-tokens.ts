import { TypeCompiler } from '@sinclair/typebox/compiler'
import { TokenError } from 'fast-jwt'
import { AccessClaimsSchema, type AccessClaims } from '../../schemas/auth.js'

/** Exactly what probes and the Python client match on. */
export const EXPIRED_REASON = 'Signature has expired.'

export type VerifyResult = { ok: true; claims: AccessClaims } | { ok: false; reason: string }

export interface Jwt {
  sign(claims: AccessClaims): string
  /** Checks signature, algorithm, issuer, required claims and expiry; throws fast-jwt's TokenError. */
  verify(token: string): unknown
  /** The same checks but expiry: a refresh may present an expired access token. */
  verifyAllowingExpired(token: string): unknown
}

const claimsAreTyped = TypeCompiler.Compile(AccessClaimsSchema)

/**
 * An HS256 signature is 32 bytes: 43 base64url characters, the last of which carries 4 bits and
 * two zero bits. fast-jwt's decoder ignores those two, so it also accepts three respellings of
 * every signature; only the one we issue is accepted here.
 */
const CANONICAL_SIGNATURE = /\.[\w-]{42}[AEIMQUYcgkosw048]$/

/** Issues and checks the service's access tokens; stateless, no store access. */
export class AccessTokens {
  constructor(
    private readonly jwt: Jwt,
    private readonly issuer: string,
    private readonly ttlSeconds: number
  ) {}

  issue(userId: string, nowMs = Date.now()): string {
    const iat = Math.floor(nowMs / 1000)
    return this.jwt.sign({ user_id: userId, exp: iat + this.ttlSeconds, iat, iss: this.issuer })
  }

  verify(token: string, { allowExpired = false } = {}): VerifyResult {
    let payload: unknown
    try {
      payload = allowExpired ? this.jwt.verifyAllowingExpired(token) : this.jwt.verify(token)
    } catch (error) {
      return { ok: false, reason: reasonFor(error) }
    }
    // fast-jwt checks that exp and iat are numbers; the contract wants safe integers and a
    // non-empty string user_id. Claims beyond the four are ignored.
    if (!claimsAreTyped.Check(payload)) return { ok: false, reason: 'The token claims are malformed.' }
    // Checked on tokens that passed only, so every other refusal keeps its own reason.
    if (!CANONICAL_SIGNATURE.test(token)) return { ok: false, reason: 'The token signature is invalid.' }
    const { user_id, exp, iat, iss } = payload
    return { ok: true, claims: { user_id, exp, iat, iss } }
  }
}

function reasonFor(error: unknown): string {
  if (!(error instanceof TokenError)) return 'The token is malformed.'
  switch (error.code) {
    case TokenError.codes.expired:
      return EXPIRED_REASON
    case TokenError.codes.invalidClaimValue:
      return error.message.includes('iss') ? 'The token issuer is not accepted.' : error.message
    default:
      return error.message
  }
}
