import type { FastifyReply } from 'fastify'

/**
 * Says on a response that its list may be part of a longer one: how many there are in all (where
 * that is known: `totalHeader`), and, when more follow, the read that gives them (an RFC 8288 `Link`
 * with `rel="next"`).
 */
export function describePart(reply: FastifyReply, { totalHeader, total, next }: { totalHeader?: string; total?: number; next: string | null }) {
  if (totalHeader !== undefined && total !== undefined) reply.header(totalHeader, total)
  if (next !== null) reply.header('link', `<${next}>; rel="next"`)
}
