import { TypeCompiler } from '@sinclair/typebox/compiler'
import { TokenError } from 'fast-jwt'
import { AccessClaimsSchema, type AccessClaims } from '../../schemas/auth.js'

/** Exactly what probes and the Python client match on. */
export const EXPIRED_REASON = 'Signature has expired.'

export const ISSUED_IN_THE_FUTURE_REASON = 'The token was issued in the future (iat).'

export const NOT_YET_VALID_REASON = 'The token will be active later (nbf).'

export type VerifyResult = { ok: true; claims: AccessClaims } | { ok: false; reason: string }

export interface AccessTokenSettings {
  /** The HS256 secret, shared by every instance. */
  secret: string
  /** The `iss` issued and required. */
  issuer: string
  ttlSeconds: number
  /** How far in the future an `iat` may lie (another instance's clock running ahead) before the token is refused. */
  issuedAtToleranceSeconds: number
}

/** The token work of @fastify/jwt (`fastify.jwt`) that AccessTokens uses: its signer, its verifier, its decoder. */
export interface JwtTools {
  sign(claims: AccessClaims): string
  verify(token: string): object
  decode(token: string): object | null
}

const claimsAreTyped = TypeCompiler.Compile(AccessClaimsSchema)

/**
 * An HS256 signature is 32 bytes: 43 base64url characters, the last of which carries 4 bits and
 * two zero bits. fast-jwt's decoder ignores those two, so it also accepts three respellings of
 * every signature; only the one we issue is accepted here.
 */
const CANONICAL_SIGNATURE = /\.[\w-]{42}[AEIMQUYcgkosw048]$/

/**
 * The verify options @fastify/jwt is registered with (src/infrastructure/authentication.ts): what
 * the verifier it builds checks of every access token, and the cache it hands fast-jwt. Time is
 * left out (expiry and nbf are checked by AccessTokens against the app's clock), so whatever
 * fast-jwt decides about a token holds at any time: it caches passes (up to 1000 tokens) and
 * refusals alike, ten minutes each.
 */
export function accessTokenVerifyOptions(settings: Pick<AccessTokenSettings, 'issuer'>) {
  return {
    algorithms: ['HS256' as const],
    allowedIss: settings.issuer,
    requiredClaims: ['user_id', 'exp', 'iat', 'iss'],
    ignoreExpiration: true,
    ignoreNotBefore: true,
    cache: 1000,
    errorCacheTTL: 600_000
  }
}

/** The times of a token that a refusal may come after (a JWT library checks them first). */
interface TokenTimes {
  nbf?: unknown
  exp?: unknown
}

/**
 * Issues and checks the service's access tokens, stateless (no store access), on the app's clock:
 * @fastify/jwt's signer and verifier do the JWT work, and this adds what the contract asks beyond
 * it (expiry on the app's clock, typed claims, the canonical signature, iat not in the future) and
 * its refusal reasons.
 */
export class AccessTokens {
  constructor(
    private readonly settings: AccessTokenSettings,
    private readonly jwt: JwtTools,
    private readonly clock: () => number
  ) {}

  issue(userId: string, nowMs = this.clock()): string {
    const iat = Math.floor(nowMs / 1000)
    return this.jwt.sign({ user_id: userId, exp: iat + this.settings.ttlSeconds, iat, iss: this.settings.issuer })
  }

  /** `allowExpired`: for a refresh, which may present an expired access token of ours. */
  verify(token: string, { allowExpired = false, nowMs = this.clock() } = {}): VerifyResult {
    let payload: TokenTimes
    try {
      payload = this.jwt.verify(token)
    } catch (error) {
      if (!(error instanceof TokenError)) return { ok: false, reason: 'The token is malformed.' }
      // The issuer, the one claim fast-jwt matches a value of, checked after the token's times.
      if (error.code === TokenError.codes.invalidClaimValue) {
        return { ok: false, reason: timeRefusal(this.jwt.decode(token) ?? {}, nowMs, allowExpired) ?? 'The token issuer is not accepted.' }
      }
      return { ok: false, reason: error.message }
    }
    const late = timeRefusal(payload, nowMs, allowExpired)
    if (late !== undefined) return { ok: false, reason: late }
    // fast-jwt checks that exp and iat are numbers; the contract wants safe integers and a
    // non-empty string user_id. Claims beyond the four are ignored.
    if (!claimsAreTyped.Check(payload)) return { ok: false, reason: 'The token claims are malformed.' }
    // Checked on tokens that passed only, so every other refusal keeps its own reason.
    if (!CANONICAL_SIGNATURE.test(token)) return { ok: false, reason: 'The token signature is invalid.' }
    const { user_id, exp, iat, iss } = payload
    // fast-jwt checks iat only against a maxAge, so a token "issued" in the future would pass.
    if (iat > nowMs / 1000 + this.settings.issuedAtToleranceSeconds) return { ok: false, reason: ISSUED_IN_THE_FUTURE_REASON }
    return { ok: true, claims: { user_id, exp, iat, iss } }
  }
}

/** nbf, then exp (unless `allowExpired`), against `nowMs`, as fast-jwt checks them with no leeway. */
function timeRefusal({ nbf, exp }: TokenTimes, nowMs: number, allowExpired: boolean): string | undefined {
  if (typeof nbf === 'number' && nowMs < nbf * 1000) return NOT_YET_VALID_REASON
  if (!allowExpired && typeof exp === 'number' && nowMs > exp * 1000) return EXPIRED_REASON
  return undefined
}
