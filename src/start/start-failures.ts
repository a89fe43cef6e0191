import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ConfigError, type Config } from '../config.js'
import { CliError } from '../cli-error.js'

/** Errors that are mistakes in this program rather than in the store: they keep their stack. */
const BUGS = [TypeError, RangeError, ReferenceError, SyntaxError]

/** What opening and preparing the store at a start threw, as the one line it stops with, as a bad configuration value does. */
export function storeFailure(config: Config, error: unknown, exitStatus = 1): unknown {
  if (error instanceof ConfigError || error instanceof CliError || BUGS.some((bug) => error instanceof bug)) return error
  // Not the store's fault: the SQLite module was built for another Node.
  const mismatch = nativeModuleMismatch(error)
  if (mismatch !== undefined) return new CliError(mismatch.message, exitStatus)
  const where = config.TRACER_STORE === 'sqlite' ? ` at ${config.TRACER_DB}` : ''
  return new CliError(`cannot use the ${config.TRACER_STORE} store${where}: ${reasonOf(error)}`, exitStatus)
}

/** What writing the generated JWT secret beside the store threw, as one line saying what to do. */
export function secretFailure(error: unknown): unknown {
  if (error instanceof ConfigError || codeOf(error) === undefined) return error
  return new CliError(`cannot keep a generated JWT secret: ${reasonOf(error)}; set JWT_SECRET, or let this user write the folder`)
}

/** The store's own error wraps SQLite's, which has the code. */
const codeOf = (error: unknown): string | undefined => {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code
    if (typeof code === 'string') return code
  }
  return undefined
}

/** Why a file could not be used, in words, with the code it came with. */
export function reasonOf(error: unknown): string {
  const code = codeOf(error)
  if (code?.startsWith('SQLITE_')) return `${SQLITE_REASONS.find(([prefix]) => code.startsWith(prefix))?.[1] ?? messageOf(error)} (${code})`
  const { syscall, path } = error as NodeJS.ErrnoException
  if (code !== undefined && syscall !== undefined && path !== undefined) {
    // Node's message reads "EACCES: permission denied, mkdir '/srv/data'": the middle is the reason.
    // A recursive mkdir says EEXIST of a file where a folder should be, and ENOTDIR of one beneath it.
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a part of that path is a file, not a folder' : (/^[A-Z0-9_]+: ([^,]+)/.exec(messageOf(error))?.[1] ?? code)
    const what = syscall === 'mkdir' ? `cannot create the folder ${path}` : `cannot create or open a file in ${dirname(path)}`
    return `${what}: ${why} (${code})`
  }
  return messageOf(error)
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')

/** Most specific first: a code is matched by its prefix (SQLITE_READONLY_DBMOVED is a SQLITE_READONLY). */
const SQLITE_REASONS: [string, string][] = [
  ['SQLITE_READONLY_DIRECTORY', 'its folder may not be written, and SQLite keeps its -wal and -shm files there'],
  ['SQLITE_READONLY', 'the file may not be written'],
  ['SQLITE_CANTOPEN', 'the file cannot be opened or created there (a folder this user may not write, or a path that names a folder)'],
  ['SQLITE_PERM', 'the operating system refused access to the file'],
  ['SQLITE_NOTADB', 'the file is not a SQLite database'],
  ['SQLITE_CORRUPT', 'the file is corrupt'],
  ['SQLITE_FULL', 'the disk is full'],
  ['SQLITE_IOERR', 'the disk answered with an I/O error'],
  ['SQLITE_BUSY', 'another process held its lock for longer than SQLITE_BUSY_TIMEOUT_MS'],
  ['SQLITE_LOCKED', 'another process held its lock for longer than SQLITE_BUSY_TIMEOUT_MS']
]

/** Node's words when an addon was built for another Node: the addon's ABI, then this Node's. */
const MISMATCH = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/

/** The Node release lines of the ABIs a reader is likely to meet, to name the Node a module was built for. */
const NODE_OF_ABI: Record<string, string> = { 108: '18', 115: '20', 127: '22', 131: '23', 137: '24', 141: '25' }

interface ThisNode {
  version: string
  /** Where this Node is installed: `bin/node` under it, and its headers in `include/node` when they came with it. */
  prefix: string
  hasHeaders: boolean
}

const thisNode = (): ThisNode => {
  const prefix = dirname(dirname(process.execPath))
  return { version: process.version, prefix, hasHeaders: existsSync(join(prefix, 'include', 'node', 'node_version.h')) }
}

/**
 * A native module built for another Node's ABI, as one line naming both and a rebuild that works:
 * Node's `npm rebuild` builds the same wrong module when npm's `nodedir` names another Node's headers.
 */
export function nativeModuleMismatch(error: unknown, node: ThisNode = thisNode()): CliError | undefined {
  const message = error instanceof Error ? error.message : ''
  const versions = MISMATCH.exec(message)
  if (versions === null) return undefined
  const [, builtFor, wanted] = versions as unknown as [string, string, string]
  const name = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(message)?.[1] ?? 'a native module'
  const built = NODE_OF_ABI[builtFor] === undefined ? `Node ABI ${builtFor}` : `Node ABI ${builtFor} (Node ${NODE_OF_ABI[builtFor]})`
  const fix = node.hasHeaders
    ? `run \`npm_config_nodedir=${node.prefix} npm rebuild ${name}\` with this Node first on PATH (npm's nodedir must point to this Node's headers, not another's)`
    : `run \`npm rebuild ${name}\` with this Node first on PATH, and npm_config_nodedir unset or pointing to this Node's headers (a nodedir in .npmrc builds for the Node it names)`
  return new CliError(`${name} was built for ${built}, this is Node ${node.version} (ABI ${wanted}): ${fix}`)
}
