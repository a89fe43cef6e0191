import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { packageVersion } from '../package-info.js'
import { completeDocument, type OpenApiDocument } from './openapi-document.js'

/** The OpenAPI document, built from the route schemas, and the interactive docs at /docs. */
async function docs(fastify: FastifyInstance) {
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'frb-tracer',
        version: packageVersion,
        description:
          'Access tokens for the pipeline, the list of detected events, and the baseband event tracer: ' +
          'how far every processing stage got at every site. Every non-2xx response is the error envelope. ' +
          'A method a path does not offer is answered 405 MethodNotAllowed, with `Allow` naming those it does; ' +
          'HEAD is answered wherever GET is.',
        // OpenAPI 3.1 takes an SPDX `identifier` or a `url`, not both: the url is what every linter reads.
        license: { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' },
        contact: { name: 'frb-tracer maintainers' }
      },
      // Relative: the service that serves this document, wherever it is deployed (and /docs calls it).
      servers: [{ url: '/', description: 'The service that serves this document.' }],
      // In alphabetical order, as tools that list them expect.
      tags: [
        { name: 'audit', description: 'Traces held against datatrail, heartbeats and the clock; trace history and stage latency' },
        { name: 'auth', description: 'Access and refresh tokens' },
        { name: 'events', description: 'Detected events' },
        { name: 'service', description: 'Service routes without a token' },
        { name: 'tracer', description: 'Baseband callbacks, event status, and the pipeline’s trace writes' }
      ],
      components: {
        securitySchemes: {
          accessToken: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'The raw access token from POST /auth; `Bearer <token>` is accepted too.'
          }
        }
      }
    },
    // The service answers HEAD wherever it answers GET (Fastify's exposeHeadRoutes); the document says so.
    exposeHeadRoutes: true,
    transformObject: (document) =>
      'openapiObject' in document ? (completeDocument(document.openapiObject as OpenApiDocument) as typeof document.openapiObject) : document.swaggerObject,
    // Components are named by their $id, so openapi.yaml says `$ref: '#/components/schemas/TokenPair'`.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`)
    }
  })
  // The page needs its own scripts and styles: a policy of its own instead of the API's 'none'.
  // That policy asks browsers to load everything over https, which only works behind TLS: over
  // plain HTTP on any address but loopback (which browsers treat as secure) the page stays blank.
  const behindTls = fastify.config.BEHIND_TLS
  await fastify.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    // openapi.yaml documents each HEAD (the contract tests hold them to it); the page would list a
    // HEAD twin of every GET, so it is given the document without them. Its description says HEAD
    // is answered wherever GET is.
    transformSpecification: (document) => withoutHeadOperations(document as OpenApiDocument),
    transformStaticCSP: (policy) => withSwaggerUiStyle(behindTls ? policy : withoutUpgradeInsecureRequests(policy))
  })
}

function withoutHeadOperations(document: OpenApiDocument): OpenApiDocument {
  for (const operations of Object.values(document.paths ?? {})) delete operations.head
  return document
}

function withoutUpgradeInsecureRequests(policy: string): string {
  return policy.replace(/\s*upgrade-insecure-requests;?/, '')
}

/**
 * The one `<style>` element Swagger UI's bundle writes into the page as it starts, by its hash:
 * without it in `style-src`, every load logged a policy violation and lost that styling. Other
 * inline styles stay refused. A new Swagger UI that writes another is caught by the browser test
 * of /docs (test/process/docs-in-browser.test.ts), which names the hash Chromium computed.
 */
const SWAGGER_UI_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"

function withSwaggerUiStyle(policy: string): string {
  return policy.replace("style-src 'self'", `style-src 'self' ${SWAGGER_UI_STYLE}`)
}

export default fp(docs, { name: 'docs', fastify: '5.x', decorators: { fastify: ['config'] } })
