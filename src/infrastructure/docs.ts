import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { packageVersion } from '../package-info.js'
import { completeDocument, type OpenApiDocument } from './openapi-document.js'

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
  // The page's own policy: its upgrade-insecure-requests leaves the page blank over plain HTTP (but loopback), so it goes unless BEHIND_TLS.
  const behindTls = fastify.config.BEHIND_TLS
  await fastify.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    // The page would list a HEAD twin of every GET: it gets the document without them (its description says HEAD is answered).
    transformSpecification: (document) => {
      for (const operations of Object.values((document as OpenApiDocument).paths ?? {})) delete operations.head
      return document
    },
    transformStaticCSP: (policy) =>
      (behindTls ? policy : policy.replace(/\s*upgrade-insecure-requests;?/, '')).replace("style-src 'self'", `style-src 'self' ${SWAGGER_UI_STYLE}`)
  })
}

// The one `<style>` Swagger UI writes as it starts, by its hash; test/process/docs-in-browser.test.ts catches a new one and names its hash.
const SWAGGER_UI_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"

export default fp(docs, { name: 'docs', fastify: '5.x', decorators: { fastify: ['config'] } })
