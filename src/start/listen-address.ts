import cluster from 'node:cluster'
import { once } from 'node:events'
import { createServer } from 'node:net'
import type { Config } from '../config.js'
import { CliError } from '../cli-error.js'

/** HOST:PORT, bound by this process from the first step of a start until its server listens there. */
export interface HeldAddress {
  /** Frees the address for the server's own listen; the second call does nothing. */
  release(): Promise<void>
}

/**
 * Binds HOST:PORT before a start writes anything, so that a start that cannot listen stops with
 * nothing written, until `release` just before the server (or the workers) listen. A client that
 * connects meanwhile is reset. A worker checks nothing: it listens through the primary, which has.
 */
export async function holdListenAddress(config: Config): Promise<HeldAddress> {
  if (cluster.isWorker) return { release: async () => {} }
  const probe = createServer((socket) => socket.destroy())
  try {
    await once(probe.listen({ port: config.PORT, host: config.HOST }), 'listening')
  } catch (error) {
    throw new CliError(cannotListen(config, error))
  }
  // A start that fails before it releases the address still ends: the socket holds no process up.
  probe.unref()
  let released: Promise<void> | undefined
  return { release: () => (released ??= new Promise((resolve) => probe.close(() => resolve()))) }
}

/** One line that says where the server tried to listen and why it could not. */
export function cannotListen(config: Config, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  const why = code === undefined ? undefined : LISTEN_FAILURES[code]
  const address = `${config.HOST}:${config.PORT}`
  return `cannot listen on ${address}: ${why ?? (error instanceof Error ? error.message : String(error))}${code === undefined ? '' : ` (${code})`}`
}

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'another process listens on that port already',
  EADDRNOTAVAIL: 'no network interface of this machine has that address',
  EACCES: 'not permitted (a port below 1024 needs privileges)',
  ENOTFOUND: 'HOST is not a name this machine can resolve',
  EAI_AGAIN: 'HOST could not be resolved now (the name service did not answer)'
}
