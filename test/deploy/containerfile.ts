// The Containerfile read as text, held to what `npm start` runs (test/process/container.test.ts
// builds and runs the image itself).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { serveEnvironment, serveNodeOptions } from '../../src/package-info.js'
import { baseImages } from '../process/containers.js'

const ROOT = join(import.meta.dirname, '../../..')
const containerfile = readFileSync(join(ROOT, 'Containerfile'), 'utf8')
/** The instructions of the image that runs, the last stage, each on one line. */
const runtime = containerfile
  .replace(/\\\n/g, ' ')
  .split(/^FROM /m)
  .at(-1)!
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'))

t.test('the container starts the server as npm start does, node itself as the first process', async (t) => {
  const cmd = runtime.filter((line) => line.startsWith('CMD '))
  t.equal(cmd.length, 1, 'one CMD')
  t.strictSame(JSON.parse(cmd[0]!.slice(4)), ['node', ...serveNodeOptions, 'dist/src/cli.js', 'serve'], 'the exec form, no shell')
  const env = runtime.filter((line) => line.startsWith('ENV ')).join(' ')
  for (const [name, value] of Object.entries(serveEnvironment)) t.match(env, ` ${name}=${value}`, `ENV sets ${name} as npm start does`)
  t.match(env, ' HOST=0.0.0.0', 'it listens on every interface of the container')
  t.match(env, ' TRACER_DB=/data/', 'the store is in the volume')
  t.ok(runtime.some((line) => /^USER (?!root\b|0\b)\S+/.test(line)), 'it runs as a user other than root')
})

t.test('the base images are read from the FROM lines, stages left out', async (t) => {
  t.strictSame(baseImages(containerfile), ['node:24-bookworm-slim'])
  t.strictSame(baseImages('FROM a:1 AS build\nRUN x\nfrom --platform=linux/amd64 b:2 as other\nFROM build\nFROM other\nFROM a:1\n'), ['a:1', 'b:2'])
})
