/**
 * A separate process of live-stream clients that read everything they are sent, so that their
 * reading does not slow the load generator of the measurement that starts it (fair-shares.ts).
 * Arguments: the service's URL, then JSON `[{token, address, paths: [...]}, ...]`: each client opens one stream per path
 * from its address. Prints `open` once every stream has its status 200 (or `refused <status>` at
 * the first that does not), then reads until its standard input closes.
 */
import { request } from 'node:http'

interface Client {
  token: string
  address: string
  paths: string[]
}

const [url = '', clientsJson = '[]'] = process.argv.slice(2)
const base = new URL(url)
const clients = JSON.parse(clientsJson) as Client[]
const total = clients.reduce((sum, client) => sum + client.paths.length, 0)
let open = 0
let bytes = 0
for (const { token, address, paths } of clients) {
  for (const path of paths) {
    const stream = request({ host: base.hostname, port: base.port, path, headers: { authorization: token }, localAddress: address }, (response) => {
      if (response.statusCode !== 200) {
        process.stdout.write(`refused ${response.statusCode}\n`)
        process.exit(1)
      }
      response.on('data', (chunk: Buffer) => void (bytes += chunk.length))
      if (++open === total) process.stdout.write('open\n')
    })
    stream.on('error', (error) => {
      process.stdout.write(`error ${error.message}\n`)
      process.exit(1)
    })
    stream.end()
  }
}
process.stdin.on('end', () => {
  process.stdout.write(`read ${bytes}\n`)
  process.exit(0)
})
process.stdin.resume()
