import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { serveEnvironment, serveNodeOptions } from '../src/package-info.js'
import { BARE_SERVER, CLI } from './paths.js'
import { listeningChildren } from './process-tree.js'

/** Every child still running, so that an interrupt (Ctrl-C) or a crash of the bench leaves none behind. */
const running = new Set<ChildProcess>()
let handlersInstalled = false

/**
 * Stops the children on SIGINT and SIGTERM, then exits. Children started with `spawn` share the
 * terminal's process group and may get the SIGINT too; sending SIGTERM as well is harmless.
 */
export function stopChildrenOnSignals(): void {
  if (handlersInstalled) return
  handlersInstalled = true
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping ${running.size} child process(es)\n`)
      void Promise.allSettled([...running].map((child) => stop(child))).then(() => process.exit(130))
    })
  }
  // Last resort for an exit that skipped the finally blocks: no process of ours outlives the bench.
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL')
  })
}

/** Sends `signal`, waits for the exit, and kills after `graceMs` (the service drains for up to 10 s). */
export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  try {
    await exited
  } finally {
    clearTimeout(timer)
  }
}

function track(child: ChildProcess): ChildProcess {
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}

/** The last `max` characters a stream printed: enough to explain a failed start, bounded in memory. */
function tail(stream: NodeJS.ReadableStream | null, max = 8192): () => string {
  let text = ''
  stream?.on('data', (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-max)
  })
  return () => text
}

/**
 * A port free right now, picked by the bench rather than read back from the service's log: its
 * workers' and the bare server's lines would have to be told apart.
 */
export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  await once(server, 'close')
  if (address === null || typeof address === 'string') throw new Error('no TCP port from the OS')
  return address.port
}

export interface RunningServer {
  url: string
  pid: number
  child: ChildProcess
  stop(): Promise<void>
}

export interface ServiceOptions {
  db: string
  jwtSecret: string
  /** POST /auth attempts a minute per address and username. The bench logs in far more often than 10. */
  authRateLimit?: number
  logLevel?: string
  /** Node options before the script, e.g. --cpu-prof. */
  nodeArgs?: string[]
  /** WORKERS: server processes on the one port (1 unless set). */
  workers?: number
  /** More of the service's environment, set last (a measurement's own bounds and timeouts). */
  env?: Record<string, string>
  /** Called with each line the service prints on standard output (its log). */
  onLine?: (line: string) => void
}

/**
 * Starts `tracer serve` in production mode on a free port and resolves once /health answers.
 * Only PATH is inherited: the developer's own TRACER_* or JWT_* variables must not change the run.
 */
export async function startService(options: ServiceOptions): Promise<RunningServer> {
  requireBuilt(CLI)
  const port = await freePort()
  const env = {
    PATH: process.env.PATH ?? '',
    ...serveEnvironment,
    NODE_ENV: 'production',
    JWT_SECRET: options.jwtSecret,
    TRACER_DB: options.db,
    HOST: '127.0.0.1',
    PORT: String(port),
    // What an operator runs: requests are logged at debug only, so info costs a request nothing.
    LOG_LEVEL: options.logLevel ?? 'info',
    AUTH_RATE_LIMIT: String(options.authRateLimit ?? 1_000_000),
    // The bench's one user drives every connection of a window scenario: its share is the whole
    // instance, so the scenarios measure the reads, not the per-client share (8 of 32 by default).
    MAX_STREAMED_RESPONSES_PER_CLIENT: '32',
    WORKERS: String(options.workers ?? 1),
    ...options.env
  }
  const child = track(
    spawn(process.execPath, [...serveNodeOptions, ...(options.nodeArgs ?? []), CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  )
  // Reading both pipes keeps a chatty server from blocking on a full pipe.
  const stdout = tail(child.stdout)
  if (options.onLine !== undefined) createInterface({ input: child.stdout! }).on('line', options.onLine)
  const stderr = tail(child.stderr)
  const url = `http://127.0.0.1:${port}`
  try {
    await waitForHealth(url, child)
    // Connections go to the workers that listen when they are made, and autocannon keeps them.
    if ((options.workers ?? 1) > 1) await waitForWorkers(child, port, options.workers!)
  } catch (error) {
    await stop(child)
    throw new Error(`${(error as Error).message}\nstdout: ${stdout()}\nstderr: ${stderr()}`)
  }
  return { url, pid: child.pid!, child, stop: () => stop(child) }
}

/** Starts bench/bare-server.ts, which prints its address as one JSON line. */
export async function startBareServer(logLevel = 'warn'): Promise<RunningServer> {
  requireBuilt(BARE_SERVER)
  const child = track(
    spawn(process.execPath, [BARE_SERVER], {
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: logLevel },
      stdio: ['ignore', 'pipe', 'pipe']
    })
  )
  const stderr = tail(child.stderr)
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const match = /"listening":"(http:\/\/[^"]+)"/.exec(buffered)
      if (match !== null) resolve(match[1]!)
    })
    child.once('exit', (code) => reject(new Error(`bare server exited (${code}): ${stderr()}`)))
  })
  return { url, pid: child.pid!, child, stop: () => stop(child) }
}

async function waitForHealth(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the service exited (${child.exitCode ?? child.signalCode}) before answering /health`)
    }
    try {
      const response = await fetch(`${url}/health`)
      if (response.ok) return
    } catch {
      // Not listening yet.
    }
    await sleep(100)
  }
  throw new Error(`the service did not answer ${url}/health within ${timeoutMs / 1000} s`)
}

async function waitForWorkers(child: ChildProcess, port: number, workers: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (listeningChildren(child.pid!, port) < workers) {
    if (Date.now() > deadline) throw new Error(`${workers} workers did not all listen within ${timeoutMs / 1000} s`)
    await sleep(100)
  }
}

export interface CliResult {
  status: number | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  input?: string
  /** Show the tool's standard error (its progress bar on a terminal) instead of capturing it. */
  inheritStderr?: boolean
}

/** Runs the built `tracer` command with only PATH and `env` in its environment. */
export async function runCli(args: string[], env: Record<string, string>, options: CliOptions = {}): Promise<CliResult> {
  requireBuilt(CLI)
  const stdio: StdioOptions = ['pipe', 'pipe', options.inheritStderr === true ? 'inherit' : 'pipe']
  const child = track(spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio }))
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdin!.end(options.input ?? '')
  const [status] = (await once(child, 'exit')) as [number | null]
  return { status, stdout, stderr }
}

function requireBuilt(file: string): void {
  if (!existsSync(file)) throw new Error(`${file} is missing: build first (npx tsc -p tsconfig.json; npm run bench does)`)
}
