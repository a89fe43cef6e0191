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

/** The signer, verifier and decoder of @fastify/jwt (`fastify.jwt`). */
export interface JwtTools {
  sign(claims: AccessClaims): string
  verify(token: string): object
  decode(token: string): object | null
}

const claimsAreTyped = TypeCompiler.Compile(AccessClaimsSchema)

/**
 * An HS256 signature is 43 base64url characters, the last carrying 4 bits and two zero bits that
 * fast-jwt's decoder ignores: of the four spellings it accepts, only the one we issue passes here.
 */
const CANONICAL_SIGNATURE = /\.[\w-]{42}[AEIMQUYcgkosw048]$/

/** Without time (AccessTokens checks exp and nbf on the app's clock), so that the verifier's decision about a token holds for good. */
export function accessTokenVerifyOptions(settings: Pick<AccessTokenSettings, 'issuer'>) {
  return {
    algorithms: ['HS256' as const],
    allowedIss: settings.issuer,
    requiredClaims: ['user_id', 'exp', 'iat', 'iss'],
    ignoreExpiration: true,
    ignoreNotBefore: true
  }
}

/** How many tokens AccessTokens remembers: once full, the one it learnt first goes. */
const REMEMBERED_TOKENS = 1000

/** The times of a token, which a JWT library checks before anything else. */
type TokenTimes = { nbf?: unknown; exp?: unknown }

/** What the checks that do not depend on time made of a token: its claims, or a refusal unless its times refuse it first. */
type Checked = { claims: AccessClaims; nbf: unknown } | { refusal: string; times?: TokenTimes }

/**
 * Issues and checks access tokens without the store: @fastify/jwt does the JWT work, and this adds what
 * the contract asks beyond it (times on the app's clock, typed claims, the canonical signature, iat not
 * in the future) and its refusal reasons. Only the times are checked again on every call.
 */
export class AccessTokens {
  readonly #checked = new Map<string, Checked>()

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
    let checked = this.#checked.get(token)
    if (checked === undefined) {
      checked = this.#check(token)
      if (this.#checked.size >= REMEMBERED_TOKENS) this.#checked.delete(this.#checked.keys().next().value!)
      this.#checked.set(token, checked)
    }
    if ('refusal' in checked) {
      const late = checked.times === undefined ? undefined : timeRefusal(checked.times, nowMs, allowExpired)
      return { ok: false, reason: late ?? checked.refusal }
    }
    const { claims } = checked
    const late = timeRefusal({ nbf: checked.nbf, exp: claims.exp }, nowMs, allowExpired)
    if (late !== undefined) return { ok: false, reason: late }
    // fast-jwt checks iat only against a maxAge, so a token "issued" in the future would pass.
    if (claims.iat > nowMs / 1000 + this.settings.issuedAtToleranceSeconds) return { ok: false, reason: ISSUED_IN_THE_FUTURE_REASON }
    return { ok: true, claims }
  }

  #check(token: string): Checked {
    let payload: TokenTimes
    try {
      payload = this.jwt.verify(token)
    } catch (error) {
      if (!(error instanceof TokenError)) return { refusal: 'The token is malformed.' }
      // The issuer, the one claim fast-jwt matches a value of, checked after the token's times.
      if (error.code === TokenError.codes.invalidClaimValue) return { refusal: 'The token issuer is not accepted.', times: timesOf(this.jwt.decode(token)) }
      return { refusal: error.message }
    }
    // fast-jwt checks that exp and iat are numbers; the contract wants safe integers and a
    // non-empty string user_id. Claims beyond the four are ignored.
    if (!claimsAreTyped.Check(payload)) return { refusal: 'The token claims are malformed.', times: timesOf(payload) }
    // Checked on tokens that passed only, so every other refusal keeps its own reason.
    if (!CANONICAL_SIGNATURE.test(token)) return { refusal: 'The token signature is invalid.', times: timesOf(payload) }
    const { user_id, exp, iat, iss, nbf } = payload as AccessClaims & TokenTimes
    return { claims: { user_id, exp, iat, iss }, nbf }
  }
}

const timesOf = (payload: TokenTimes | null): TokenTimes => ({ nbf: payload?.nbf, exp: payload?.exp })

/** nbf, then exp (unless `allowExpired`), against `nowMs`, as fast-jwt checks them with no leeway. */
function timeRefusal({ nbf, exp }: TokenTimes, nowMs: number, allowExpired: boolean): string | undefined {
  if (typeof nbf === 'number' && nowMs < nbf * 1000) return NOT_YET_VALID_REASON
  if (!allowExpired && typeof exp === 'number' && nowMs > exp * 1000) return EXPIRED_REASON
  return undefined
}
