import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { toAppError } from './error-mapping.js'
import { send } from './error-handler.js'
import { AppError } from '../../app-error.js'

/** Errors Node's HTTP parser raises before Fastify sees a request still get the envelope, written straight to the socket. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy()
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError(431, 'RequestHeaderFieldsTooLarge', ['The request headers are too large.'])
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError(408, 'RequestTimeout', ['The request took too long to arrive.'])
        : new AppError(400, 'BadRequest', ['The request is not valid HTTP.'])
  const body = JSON.stringify(appError.envelope)
  const head = `HTTP/1.1 ${appError.statusCode} ${STATUS_CODES[appError.statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\n`
  socket.end(`${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
}

/** Fastify's router errors (a malformed URL, a path parameter over its length limit). */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void send(reply, toAppError(error))
}
