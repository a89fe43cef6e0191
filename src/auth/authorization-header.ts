const BEARER = /^bearer\s+/i

/**
 * The token an Authorization header carries: the raw token (what the Python client sends) or
 * `Bearer <token>`. Undefined when the header is absent or empty, which the contract treats alike.
 */
export function tokenFromHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const token = value.trim().replace(BEARER, '')
  return token === '' ? undefined : token
}
