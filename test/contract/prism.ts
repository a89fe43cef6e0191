/**
 * Stoplight Prism as a validating proxy in front of a test's app: with CONTRACT_THROUGH_PRISM=1
 * (`npm run contract:prism`), every request the contract suite makes is sent a second time over
 * loopback through `prism proxy openapi.yaml`, which checks the request and the real response
 * against the document and lists what breaks it in the `sl-violations` header. HEAD requests are
 * not sent: Prism 5's proxy reads an answer's body by its content type, and fails (a FetchError,
 * not a finding) on a HEAD answer's empty JSON body. The 408 and 431 answers, made before any
 * route is chosen, are checked over raw sockets instead.
 */
import type { InjectOptions } from 'fastify'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { createRequire } from 'node:module'
import type { Test } from 'tap'
import type { App } from '../helper.js'
import { end, spawnOwned } from '../owned-processes.js'

export const throughPrism = process.env.CONTRACT_THROUGH_PRISM === '1'

const prismCli = () => createRequire(import.meta.url).resolve('@stoplight/prism-cli/dist/index.js')

/** A port nobody listens on now (Prism takes a port number, not 0). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

const proxies = new WeakMap<App, Promise<string>>()

/** The proxy in front of `app`: the app listens on loopback, Prism in front of it; both end with the test. */
export function prismFor(t: Test, app: App): Promise<string> {
  let proxy = proxies.get(app)
  if (proxy === undefined) {
    proxy = (async () => {
      await app.listen({ host: '127.0.0.1', port: 0 })
      const { port: upstream } = app.server.address() as { port: number }
      const port = await freePort()
      const child = spawnOwned(process.execPath, [prismCli(), 'proxy', 'openapi.yaml', `http://127.0.0.1:${upstream}`, '--host', '127.0.0.1', '--port', String(port)], {
        stdio: ['ignore', 'pipe', 'pipe']
      })
      t.teardown(() => end(child))
      let output = ''
      await new Promise<void>((resolve, reject) => {
        const read = (chunk: Buffer) => {
          output += chunk.toString()
          if (output.includes('Prism is listening')) resolve()
        }
        child.stdout!.on('data', read)
        child.stderr!.on('data', read)
        child.once('exit', (code) => reject(new Error(`prism exited (${code}) before listening: ${output.slice(-2000)}`)))
      })
      return `http://127.0.0.1:${port}`
    })()
    proxies.set(app, proxy)
  }
  return proxy
}

/** What Prism found wrong with one request and the response the app gave it. */
export interface PrismCheck {
  status: number
  violations: { location?: string[]; message?: string; severity?: string }[]
}

/** Sends `options` through the app's Prism proxy; a stream is read until the app ends it. */
export async function sendThroughPrism(t: Test, app: App, options: InjectOptions & { url: string }): Promise<PrismCheck> {
  const base = await prismFor(t, app)
  const headers = Object.fromEntries(Object.entries(options.headers ?? {}).map(([name, value]) => [name, String(value)]))
  const payload = options.payload
  const body = payload === undefined ? undefined : typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload)
  if (body !== undefined && typeof payload === 'object' && !Buffer.isBuffer(payload) && headers['content-type'] === undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`${base}${options.url}`, { method: String(options.method ?? 'GET'), headers, body })
  await response.arrayBuffer()
  const violations = JSON.parse(response.headers.get('sl-violations') ?? '[]') as PrismCheck['violations']
  return { status: response.status, violations }
}
