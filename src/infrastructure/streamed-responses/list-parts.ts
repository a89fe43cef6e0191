import type { FastifyReply } from 'fastify'

/** A list's part: its `total` header and, when more follow, an RFC 8288 `Link` with `rel="next"` to the read that gives them. */
export function describePart(reply: FastifyReply, { next, total }: { next: string | null; total?: { header: string; count: number } }) {
  if (total !== undefined) reply.header(total.header, total.count)
  if (next !== null) reply.header('link', `<${next}>; rel="next"`)
}
