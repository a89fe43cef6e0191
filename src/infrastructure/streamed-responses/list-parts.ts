import type { FastifyReply } from 'fastify'

/**
 * Says on a response that its list may be part of a longer one: how many there are in all, where
 * that is kept (`total`: its header and count), and, when more follow, the read that gives them (an
 * RFC 8288 `Link` with `rel="next"`).
 */
export function describePart(reply: FastifyReply, { next, total }: { next: string | null; total?: { header: string; count: number } }) {
  if (total !== undefined) reply.header(total.header, total.count)
  if (next !== null) reply.header('link', `<${next}>; rel="next"`)
}
