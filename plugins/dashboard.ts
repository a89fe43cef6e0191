import fastifyStatic from '@fastify/static'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serviceUnavailable } from '../src/app-error.js'

/** Where the build puts the page, next to the compiled plugins (dist/plugins → dist/dashboard). */
export const builtDashboard = () => fileURLToPath(new URL('../dashboard/', import.meta.url))

/** The page's own scripts, styles, images and fonts, calls to its own origin, and nothing else. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** Built assets carry a content hash in their names, so they never change under one name. */
const HASHED = /-[A-Z0-9]{8}\.(js|css|map)$/

const hidden = { schema: { hide: true } }

/** The operator dashboard at /dashboard/, out of openapi.yaml; without the built assets every page answers 503 saying how to build them. */
async function dashboard(fastify: FastifyInstance, { root }: { root: string }) {
  // The query string is a view of the dashboard (window, filters, open event): a shortened link keeps it.
  const toDashboard = (request: FastifyRequest, reply: FastifyReply) => {
    const query = request.url.indexOf('?')
    return reply.redirect(`/dashboard/${query < 0 ? '' : request.url.slice(query)}`, 302)
  }
  fastify.get('/', hidden, toDashboard)
  fastify.get('/dashboard', hidden, toDashboard)

  await fastify.register(async (page) => {
    page.addHook('onRequest', async (_request, reply) => {
      reply.header('content-security-policy', DASHBOARD_CSP)
    })
    if (!existsSync(join(root, 'index.html'))) {
      // The routes @fastify/static would add: `/dashboard/*` also matches `/dashboard/`.
      page.get('/dashboard/*', hidden, async () => {
        throw serviceUnavailable('The dashboard is not built: run `npm run build`, then start the service again.')
      })
      return
    }
    await page.register(fastifyStatic, {
      root,
      prefix: '/dashboard/',
      decorateReply: false,
      schemaHide: true,
      index: 'index.html',
      // Only the page's own files at the top of the folder: the compiler's output of the page's
      // sources (used by the unit tests) lives in subfolders and is not served.
      allowedPath: (pathName) => !pathName.slice(1).includes('/'),
      cacheControl: false,
      setHeaders: (reply, path) => {
        reply.header('cache-control', HASHED.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache')
      }
    })
  })
}

export default dashboard
