import { constants, existsSync, lstatSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { CliError } from '../cli-error.js'

/** The files SQLite keeps beside a database: a journal or a WAL there holds pages that belong to it. */
const SIDECARS = ['-journal', '-wal', '-shm'] as const

/** Where a backup writes: the copy, and the file it is made in before it is checked. */
interface Destination {
  target: string
  partial: string
}

/**
 * Refuses, whatever the flags, a FILE or FILE.partial (or its journal) that is a file of the store
 * by path, symbolic or hard link: a copy over its -wal or -shm loses the writes it holds, or lets
 * two instances share the store through two wal-indexes. Then an existing FILE without --force, and
 * a FILE that is a database in use.
 */
export function checkDestination(store: string, file: string, force: boolean): Destination {
  const target = resolve(file)
  const partial = `${target}.partial`
  const folder = statOf(dirname(target))
  if (folder === undefined || !folder.isDirectory()) throw new CliError(`cannot write ${file}: there is no folder ${dirname(target)}`)

  const storeFiles = filesOfStore(store)
  for (const [path, shown] of [[target, file], ...withSidecars(partial).map((path) => [path, path] as const)] as const) {
    const part = storeFiles.partOf(path)
    if (part !== undefined) throw new CliError(`${shown} is ${part}: write the copy elsewhere`)
  }

  const existing = statOf(target)
  if (existing !== undefined) {
    if (!existing.isFile()) throw new CliError(`${file} exists and is not a file; nothing was written`)
    if (!force) throw new CliError(`${file} exists; nothing was written: pass --force to replace it`)
    const sidecar = SIDECARS.find((suffix) => existsSync(target + suffix))
    if (sidecar !== undefined) throw new CliError(`${file}${sidecar} exists: ${file} may be a database in use; nothing was written`)
  }
  return { target, partial }
}

/**
 * Makes FILE.partial new (never through a link nor over a file), readable by its owner only, as the
 * store is. One there is a backup `running` (it holds a write lock) or cut short: only that, with --force, is replaced.
 */
export async function createPartial(destination: Destination, file: string, force: boolean, running: (path: string) => boolean): Promise<void> {
  const { partial } = destination
  const leftover = withSidecars(partial).filter((path) => lstatOf(path) !== undefined)
  if (leftover.length > 0) {
    if (leftover.some((path) => lstatOf(path)!.isSymbolicLink())) {
      throw new CliError(`${file}.partial or its journal is a symbolic link: a backup writes only files it creates; nothing was written`)
    }
    if (existsSync(partial) && running(partial)) throw new CliError(`a backup to ${file} is running now (${file}.partial is being written); nothing was written`)
    if (!force) throw new CliError(`${file}.partial exists: a backup to ${file} is running or was cut short; nothing was written: remove it, or pass --force`)
    await removeWithSidecars(partial)
  }
  const flags = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW
  const handle = await open(partial, flags, 0o600).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') throw new CliError(`a backup to ${file} began just now (${file}.partial appeared); nothing was written`)
    throw error
  })
  // The mode given to open is narrowed by the umask, never widened: set it whatever the umask.
  await handle.chmod(0o600).finally(() => handle.close())
}

export async function removeWithSidecars(path: string): Promise<void> {
  await Promise.all(withSidecars(path).map((file) => rm(file, { force: true })))
}

const withSidecars = (path: string) => [path, ...SIDECARS.map((suffix) => path + suffix)]

/** The store's files by every name that reaches them, and by their identity on disk (a hard link). */
function filesOfStore(store: string) {
  const names = new Map<string, string>()
  const identities = new Map<string, string>()
  for (const base of new Set([resolve(store), followLinks(store)])) {
    for (const suffix of ['', ...SIDECARS]) {
      const part = suffix === '' ? 'the store itself (TRACER_DB)' : `the store's ${suffix} file (TRACER_DB${suffix})`
      names.set(base + suffix, part)
      const found = statOf(base + suffix)
      if (found !== undefined) identities.set(identityOf(found), part)
    }
  }
  return {
    partOf(path: string): string | undefined {
      const byName = names.get(resolve(path)) ?? names.get(followLinks(path))
      if (byName !== undefined) return byName
      const found = statOf(path)
      return found === undefined ? undefined : identities.get(identityOf(found))
    }
  }
}

const identityOf = (stats: Stats) => `${stats.dev}:${stats.ino}`

/** The path a name leads to once every symbolic link is followed, the last even where it leads nowhere yet (a -journal SQLite would create). */
function followLinks(path: string): string {
  let current = resolve(path)
  for (let hops = 0; hops < 40; hops++) {
    const folder = dirname(current)
    const real = join(existsSync(folder) ? realpathSync(folder) : folder, basename(current))
    const stats = lstatOf(real)
    if (stats === undefined || !stats.isSymbolicLink()) return real
    current = resolve(dirname(real), readlinkSync(real))
  }
  return current
}

const statOf = (path: string) => ignoringMissing(() => statSync(path))
const lstatOf = (path: string) => ignoringMissing(() => lstatSync(path))

function ignoringMissing<T>(read: () => T): T | undefined {
  try {
    return read()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return undefined
    throw error
  }
}
