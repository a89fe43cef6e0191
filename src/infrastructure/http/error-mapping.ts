import type { FastifyError } from 'fastify'
import type { Exception } from '../../../schemas/common.js'
import { AppError, badRequest } from '../../app-error.js'
import { fieldText, InputError } from '../../domain/input-error.js'
import { KeptAuditRebuildingError } from '../../kept-audit/rebuild.js'
import { StoreUnavailableError } from '../../store/port.js'
import { describeValidationIssue } from './validation-issues.js'

const exceptionByStatus: Partial<Record<number, Exception>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'RequestTimeout',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  431: 'RequestHeaderFieldsTooLarge',
  503: 'ServiceUnavailable'
}

/** Reasons for Fastify's own errors, worded for the client instead of for a Fastify developer. */
const reasonByCode: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'The body is not valid JSON.',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'The body is empty but Content-Type says JSON.',
  FST_ERR_CTP_BODY_TOO_LARGE: 'The body is larger than this service accepts.',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type; send application/json.',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body.',
  FST_ERR_BAD_URL: 'The URL is malformed.',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is too long.'
}

// Fastify answers 414 for an over-long path parameter; to the contract it is a bad value (400).
const statusByCode: Record<string, number> = { FST_ERR_MAX_PARAM_LENGTH: 400 }

const INTERNAL_ERROR = new AppError(500, 'InternalError', ['Internal error.'])

/** Every error a request can end with, as the envelope of CONTRACT section 1. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error
  if (!(error instanceof Error)) return INTERNAL_ERROR
  if (error instanceof InputError) return badRequest(`${fieldText(error.field)} ${error.reason}`)
  if (error instanceof KeptAuditRebuildingError) return new AppError(503, 'ServiceUnavailable', [error.message])
  if (error instanceof StoreUnavailableError) return new AppError(503, 'ServiceUnavailable', ['The store is unavailable; try again shortly.'])
  const fastifyError = error as FastifyError
  if (fastifyError.validation !== undefined) {
    const context = fastifyError.validationContext ?? 'request'
    return new AppError(400, 'BadRequest', fastifyError.validation.map((issue) => describeValidationIssue([partName[context] ?? context], issue)))
  }
  const status = statusByCode[fastifyError.code] ?? fastifyError.statusCode
  if (status === undefined || status < 400 || status >= 500) return INTERNAL_ERROR
  // A 4xx keeps its status, named BadRequest when the contract has no name for it (a static file's 416); a parser's SyntaxError is bad JSON.
  const reason = reasonByCode[fastifyError.code] ?? (error instanceof SyntaxError ? reasonByCode.FST_ERR_CTP_INVALID_JSON_BODY : error.message)
  return new AppError(status, exceptionByStatus[status] ?? 'BadRequest', [reason ?? 'Bad request.'])
}

const partName: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' }
