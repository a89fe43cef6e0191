/**
 * A separate process of clients that read one event's history by the service's links, over and
 * over, so that their reading does not slow the measurement of /health that starts it
 * (long-history.ts). Arguments: the service's URL, the first part's path, the seconds to read, then
 * JSON `[{token, address}, ...]`: each client reads from its own address on a connection of its own.
 * Prints one JSON line, `{parts, statuses}`, when the time is up.
 */
import { Agent, request } from 'node:http'

interface Client {
  token: string
  address: string
}

const [url = '', first = '', secondsText = '10', clientsJson = '[]'] = process.argv.slice(2)
const base = new URL(url)
const clients = JSON.parse(clientsJson) as Client[]
const until = performance.now() + Number(secondsText) * 1000
const statuses: Record<string, number> = {}
let parts = 0

/** One part: its status and the path its Link names, the body read and dropped. */
function read(path: string, client: Client, agent: Agent): Promise<{ status: number; next: string | null }> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: base.hostname, port: base.port, path, agent, headers: { authorization: client.token } }, (response) => {
      const link = response.headers.link
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode ?? 0, next: typeof link === 'string' ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null }))
    })
    sent.on('error', reject)
    sent.end()
  })
}

await Promise.all(
  clients.map(async (client) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: client.address })
    let path = first
    while (performance.now() < until) {
      const { status, next } = await read(path, client, agent)
      statuses[status] = (statuses[status] ?? 0) + 1
      parts++
      path = next ?? first
    }
    agent.destroy()
  })
)
process.stdout.write(`${JSON.stringify({ parts, statuses })}\n`)
