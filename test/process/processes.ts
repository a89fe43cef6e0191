import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'
import type { Test } from 'tap'
import { serveEnvironment, serveNodeOptions } from '../../src/package-info.js'
import { end, spawnOwned } from '../owned-processes.js'

export { stop } from '../owned-processes.js'

/** Process tests run the built service, exactly what `npm start` runs; `npm test` builds it first. */
const CLI = 'dist/src/cli.js'

/** Only what a process needs: none of the developer's own TRACER_* or JWT_* variables leak in. */
const baseEnv = () => ({ PATH: process.env.PATH ?? '', LOG_LEVEL: 'info' })

export interface ServerProcess {
  url: string
  child: ChildProcess
  /** Everything the process printed to stdout, line by line, so far. */
  output: string[]
  /** Resolves with the first line of stdout, printed so far or later, that matches. */
  lineMatching(pattern: RegExp): Promise<string>
}

/** Whom the server runs as, when not as the test itself: an unprivileged user meets file permissions. */
export interface RunAs {
  uid: number
  gid: number
}

/** A `tracer serve` process as spawned, before it listens: for tests of what happens on the way. */
export type SpawnedServer = Omit<ServerProcess, 'url'>

/**
 * Spawns `tracer serve` (on a free port unless `env` says otherwise) in a process group of its own:
 * stopped when the test ends, then the group killed, and killed whatever ends this test process.
 */
export function spawnServer(t: Test, env: Record<string, string>, runAs?: RunAs): SpawnedServer {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run the tests with npm test, which builds first`)
  const child = spawnOwned(process.execPath, [...serveNodeOptions, CLI, 'serve'], {
    env: { ...baseEnv(), ...serveEnvironment, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...runAs
  })
  return watched(t, child)
}

/**
 * A process spawnOwned started with its standard output and error piped: stopped when the test
 * ends, then its group killed; its standard output read line by line.
 */
export function watched(t: Test, child: ChildProcess): SpawnedServer {
  t.teardown(() => end(child))
  const output: string[] = []
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const lines = createInterface({ input: child.stdout! })
  lines.on('line', (line) => output.push(line))
  const lineMatching = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const found = output.find((line) => pattern.test(line))
      if (found !== undefined) return resolve(found)
      const onLine = (line: string) => {
        if (!pattern.test(line)) return
        lines.off('line', onLine)
        resolve(line)
      }
      lines.on('line', onLine)
      child.once('exit', (code) =>
        reject(new Error(`server exited (${code}) before printing ${pattern}: ${stderr}\n${output.slice(-5).join('\n')}`))
      )
    })
  return { child, output, lineMatching }
}

/** Starts `tracer serve` on a free port and resolves once it listens; stopped when the test ends. */
export async function startServer(t: Test, env: Record<string, string>, runAs?: RunAs): Promise<ServerProcess> {
  const server = spawnServer(t, env, runAs)
  const listening = await server.lineMatching(/"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"/)
  const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(listening)![1]!
  return { url, ...server }
}

export interface CliResult {
  status: number | null
  stdout: string
  stderr: string
}

/** Runs the command-line tool with `input` on its standard input, in a process group killed once it exits or this process ends. */
export function runCli(args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  return runToEnd(process.execPath, [CLI, ...args], { ...baseEnv(), ...env }, input)
}

/** Runs `command` to its end with only `env` and `input` on its standard input, in a process group killed once it exits or this process ends. */
export async function runToEnd(command: string, args: string[], env: Record<string, string>, input = ''): Promise<CliResult> {
  const child = spawnOwned(command, args, { env, stdio: 'pipe' })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  child.stdin!.end(input)
  const [status] = (await once(child, 'exit')) as [number | null]
  await end(child)
  return { status, stdout, stderr }
}

/** POST or GET with JSON, as any HTTP client would. */
export async function request(url: string, options: { method?: string; token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers.authorization = options.token
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(url, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body)
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** Resolves once `condition` holds, asking again and again; rejects when it still does not after `deadlineMs`. */
export async function waitFor(condition: () => Promise<boolean>, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`the condition did not hold within ${deadlineMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A line the primary of several workers logged about one of them. */
export interface WorkerEvent {
  msg: string
  time: number
  worker: number
  workerPid: number
  code?: number | null
  signal?: string | null
  restartInMs?: number
}

/** The JSON log lines printed so far, parsed (announcements and other plain lines left out). */
export function logLines(server: ServerProcess): Record<string, unknown>[] {
  return server.output.flatMap((line) => {
    if (!line.startsWith('{')) return []
    return [JSON.parse(line) as Record<string, unknown>]
  })
}

/** What the primary has logged about its workers so far, in order. */
export function workerEvents(server: ServerProcess): WorkerEvent[] {
  return logLines(server).filter((line) => typeof line.workerPid === 'number') as unknown as WorkerEvent[]
}

export interface WorkersProcess extends ServerProcess {
  /** The pids of the workers first started, by worker number (index 0 is worker 1). */
  pids: number[]
}

/** Starts `tracer serve` with WORKERS in `env` and resolves once every worker listens. */
export async function startWorkers(t: Test, env: Record<string, string>): Promise<WorkersProcess> {
  const server = await startServer(t, env)
  await server.lineMatching(/"msg":"every worker is listening"/)
  const pids: number[] = []
  for (const event of workerEvents(server)) if (event.msg === 'worker listening') pids[event.worker - 1] = event.workerPid
  return { ...server, pids }
}

/** Whether a process with this pid exists (a zombie counts: its parent has not reaped it). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

/** A local port nothing listens on: connections to it are refused at once. */
export async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** The resident set size of process `pid` now, in MB (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024
}

/** Whether process `pid` runs: it exists and is no zombie (exited, its parent not having reaped it yet). Linux. */
export function isAlive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}
