import type { FastifyReply } from 'fastify'

/** Sends JSON text made beforehand as it is: Fastify does not serialise a string sent as JSON. */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text)
}
