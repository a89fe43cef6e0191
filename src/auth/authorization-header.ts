import type { IncomingMessage } from 'node:http'
import { badRequest } from '../app-error.js'

const BEARER = /^bearer\s+/i

/**
 * The token a request carries: the raw token (what the Python client sends) or `Bearer <token>`.
 * Undefined when the header is absent or empty, which the contract treats alike. Several
 * Authorization headers are refused: Node keeps the first, a proxy in front may read the last.
 */
export function tokenOf(request: IncomingMessage): string | undefined {
  const headers = request.rawHeaders
  let value: string | undefined
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!
    if (name.length === 13 && name.toLowerCase() === 'authorization') {
      if (value !== undefined) throw badRequest('header.authorization must be sent once')
      value = headers[i + 1]
    }
  }
  if (value === undefined) return undefined
  const token = value.trim().replace(BEARER, '')
  return token === '' ? undefined : token
}
