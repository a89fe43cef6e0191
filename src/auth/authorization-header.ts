import type { IncomingMessage } from 'node:http'
import { badRequest } from '../app-error.js'

const BEARER = /^bearer\s+/i

/**
 * The raw token (as the Python client sends it) or `Bearer <token>`; undefined when absent or empty, alike for the
 * contract. Several Authorization headers are refused: Node keeps the first, a proxy in front may read the last.
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
