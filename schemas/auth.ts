import { Type, type Static } from '@sinclair/typebox'
import { ErrorEnvelopeSchema, StringEnum } from './common.js'

export const roles = ['reader', 'writer', 'admin'] as const
export const RoleSchema = StringEnum(roles, {
  $id: 'Role',
  description: '`reader` may call every GET route; `writer` also the write routes; `admin` everything.'
})
export type Role = Static<typeof RoleSchema>

export const UsernameSchema = Type.String({ minLength: 1, maxLength: 256 })
export const PasswordSchema = Type.String({ minLength: 1, maxLength: 256 })

export const CredentialsSchema = Type.Object(
  { username: UsernameSchema, password: PasswordSchema },
  { $id: 'Credentials', description: 'A username and password.', additionalProperties: false }
)
export type Credentials = Static<typeof CredentialsSchema>

const AccessToken = Type.String({ description: 'HS256 JSON Web Token; send it as the Authorization header.' })
const RefreshToken = Type.String({ description: 'UUID v4; with an active or expired access token it yields a new access token.', minLength: 1, maxLength: 256 })

export const TokenPairSchema = Type.Object({ access_token: AccessToken, refresh_token: RefreshToken }, { $id: 'TokenPair', additionalProperties: false })
export type TokenPair = Static<typeof TokenPairSchema>

export const AccessTokenResponseSchema = Type.Object({ access_token: AccessToken }, { $id: 'AccessTokenResponse', additionalProperties: false })

export const RefreshRequestSchema = Type.Object({ refresh_token: RefreshToken }, { $id: 'RefreshRequest', additionalProperties: false })

export const TokenValidSchema = Type.Object({ valid: Type.Literal(true) }, { $id: 'TokenValid', additionalProperties: false })

export const TokenInvalidSchema = Type.Object(
  { valid: Type.Literal(false), reasons: ErrorEnvelopeSchema.properties.reasons, exception: Type.Literal('InvalidToken') },
  { $id: 'TokenInvalid', description: 'The error envelope, with `valid: false`.', additionalProperties: false }
)

/** The claims of every access token this service issues: exactly these four. */
export const AccessClaimsSchema = Type.Object({
  user_id: Type.String({ minLength: 1 }),
  exp: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  iat: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  iss: Type.String()
})
export type AccessClaims = Static<typeof AccessClaimsSchema>
