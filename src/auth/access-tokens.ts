import { TypeCompiler } from '@sinclair/typebox/compiler'
import { createVerifier, TokenError } from 'fast-jwt'
import { AccessClaimsSchema, type AccessClaims } from '../../schemas/auth.js'

/** Exactly what probes and the Python client match on. */
export const EXPIRED_REASON = 'Signature has expired.'

export const ISSUED_IN_THE_FUTURE_REASON = 'The token was issued in the future (iat).'

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

const claimsAreTyped = TypeCompiler.Compile(AccessClaimsSchema)

/**
 * An HS256 signature is 32 bytes: 43 base64url characters, the last of which carries 4 bits and
 * two zero bits. fast-jwt's decoder ignores those two, so it also accepts three respellings of
 * every signature; only the one we issue is accepted here.
 */
const CANONICAL_SIGNATURE = /\.[\w-]{42}[AEIMQUYcgkosw048]$/

/**
 * What fast-jwt checks of every access token, and how its verifier caches (accessTokenVerifyOptions
 * puts the two together). Results are cached (up to 1000 tokens) until each token's own expiry,
 * failures for ten minutes since a token that fails cannot pass later, except one not valid yet: it
 * passes from its nbf on, so that refusal is not kept. Keyed by the token itself: fast-jwt's
 * default key is a SHA-256 of it, which costs as much as verifying.
 */
export function accessTokenChecks(settings: Pick<AccessTokenSettings, 'issuer'>) {
  return {
    algorithms: ['HS256' as const],
    allowedIss: settings.issuer,
    requiredClaims: ['user_id', 'exp', 'iat', 'iss'],
    clockTolerance: 0
  }
}

export function accessTokenCache() {
  return {
    cache: 1000,
    cacheKeyBuilder: (token: string) => token,
    errorCacheTTL: (error: TokenError) => (error.code === TokenError.codes.inactive ? 0 : 600_000)
  }
}

/**
 * The options of the cached verifier: the one @fastify/jwt is registered with (see
 * src/infrastructure/authentication.ts) and the one AccessTokens calls, so that both check alike.
 */
export function accessTokenVerifyOptions(settings: Pick<AccessTokenSettings, 'issuer'>) {
  return { ...accessTokenChecks(settings), ...accessTokenCache() }
}

/**
 * Issues and checks the service's access tokens, stateless (no store access): the signer given
 * (@fastify/jwt's) and fast-jwt's verifiers do the JWT work, and this adds what the contract asks
 * beyond it (typed claims, the canonical signature, iat not in the future) and its refusal reasons.
 * The cached verifier is called directly: @fastify/jwt's `jwt.verify` copies its options into new
 * objects on every call before it reaches a verifier built from the same options.
 */
export class AccessTokens {
  /** Every check, cached. */
  private readonly verifyCached: (token: string) => unknown
  /** The same checks but expiry, uncached: a refresh may present an expired access token. */
  private readonly verifyAllowingExpired: (token: string) => unknown

  /** Build it inside withoutCacheKeyWarning: the cached verifier has a custom cache key. */
  constructor(
    private readonly settings: AccessTokenSettings,
    private readonly sign: (claims: AccessClaims) => string
  ) {
    this.verifyCached = createVerifier({ key: settings.secret, ...accessTokenVerifyOptions(settings) })
    this.verifyAllowingExpired = createVerifier({ key: settings.secret, ...accessTokenChecks(settings), ignoreExpiration: true })
  }

  issue(userId: string, nowMs = Date.now()): string {
    const iat = Math.floor(nowMs / 1000)
    return this.sign({ user_id: userId, exp: iat + this.settings.ttlSeconds, iat, iss: this.settings.issuer })
  }

  verify(token: string, { allowExpired = false, nowMs = Date.now() } = {}): VerifyResult {
    let payload: unknown
    try {
      payload = allowExpired ? this.verifyAllowingExpired(token) : this.verifyCached(token)
    } catch (error) {
      return { ok: false, reason: reasonFor(error) }
    }
    // fast-jwt checks that exp and iat are numbers; the contract wants safe integers and a
    // non-empty string user_id. Claims beyond the four are ignored.
    if (!claimsAreTyped.Check(payload)) return { ok: false, reason: 'The token claims are malformed.' }
    // Checked on tokens that passed only, so every other refusal keeps its own reason.
    if (!CANONICAL_SIGNATURE.test(token)) return { ok: false, reason: 'The token signature is invalid.' }
    const { user_id, exp, iat, iss } = payload
    // fast-jwt checks iat only against a maxAge, so a token "issued" in the future would pass.
    // Checked here, after the cache, so the refusal is never kept: such a token passes once the
    // clocks agree with it.
    if (iat > nowMs / 1000 + this.settings.issuedAtToleranceSeconds) return { ok: false, reason: ISSUED_IN_THE_FUTURE_REASON }
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

/**
 * fast-jwt warns about any custom cache key, because one that collides could hand one user's
 * verified claims to another. The token itself cannot collide, so that one warning is dropped
 * while `create` builds the verifiers.
 */
export async function withoutCacheKeyWarning<T>(create: () => PromiseLike<T>): Promise<T> {
  const emitWarning = process.emitWarning.bind(process)
  process.emitWarning = function (warning: string | Error, ...rest: unknown[]) {
    if ((rest[0] as { code?: unknown } | undefined)?.code === 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK') return
    return (emitWarning as (...args: unknown[]) => void)(warning, ...rest)
  }
  try {
    return await create()
  } finally {
    process.emitWarning = emitWarning
  }
}
