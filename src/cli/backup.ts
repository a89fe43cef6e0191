import { Command } from 'commander'
import { existsSync } from 'node:fs'
import { open, rename } from 'node:fs/promises'
import { dirname } from 'node:path'
import { CliError } from '../cli-error.js'
import { loadConfig } from '../config.js'
import { reasonOf } from '../start/start-failures.js'
import { checkDestination, createPartial, removeWithSidecars } from './backup-destination.js'
import type { CliIo } from './io.js'
import { mebibytes, progressBar } from './progress.js'

export function backupCommand(io: CliIo): Command {
  return new Command('backup')
    .description('copy the SQLite store to a new file while instances serve and write, and check the copy (see docs/backup.md)')
    .argument('<file>', 'the copy, written as FILE.partial and renamed to FILE once checked')
    .option('--force', 'replace FILE if it exists, and a FILE.partial a backup cut short left')
    .action(async (file: string, options: { force?: boolean }) => {
      const config = loadConfig(io.env)
      if (config.TRACER_STORE !== 'sqlite') throw new CliError('tracer backup copies the SQLite store: back up a MongoDB store with mongodump (see docs/backup.md)')
      const store = config.TRACER_DB
      if (store === ':memory:') throw new CliError('TRACER_DB is :memory:, a store that lives and dies with its process: there is no file to back up')
      if (!existsSync(store)) throw new CliError(`There is no SQLite store at ${store}: check TRACER_DB; nothing was written.`)
      const force = options.force === true
      const destination = checkDestination(store, file, force)
      const { target, partial } = destination

      const started = performance.now()
      // Loaded when backing up: every other command, `serve` included, parses its arguments with this module.
      const { BackupCheckError, StoreSnapshot, checkCopy, isBeingWritten } = await import('../store/sqlite/backup.js')
      const oneLine = (what: string, error: unknown) => {
        if (error instanceof BackupCheckError) return new CliError(`${what}: ${error.message}`)
        if (typeof (error as { code?: unknown } | null)?.code === 'string') return new CliError(`${what}: ${reasonOf(error)}`)
        return error
      }
      let snapshot
      try {
        snapshot = StoreSnapshot.take(store, config.SQLITE_BUSY_TIMEOUT_MS)
      } catch (error) {
        throw oneLine(`cannot read the sqlite store at ${store}; nothing was written`, error)
      }
      let counts
      try {
        await createPartial(destination, file, force, isBeingWritten)
      } catch (error) {
        snapshot.close()
        throw oneLine(`cannot back up ${store} to ${file}; nothing was written`, error)
      }
      try {
        const { pageSize } = snapshot
        const progress = await progressBar(io.stderr, snapshot.pages * pageSize, { label: 'Backing up', format: mebibytes })
        try {
          await snapshot.copyTo(partial, { onStep: (pages) => progress.update(pages * pageSize) })
        } finally {
          progress.stop()
          // The copy is made: writers' checkpoints need not keep the WAL for this reader any longer.
          snapshot.close()
        }
        counts = checkCopy(partial, snapshot)
        await rename(partial, target)
        await syncFolder(dirname(target))
      } catch (error) {
        snapshot.close()
        await removeWithSidecars(partial)
        throw oneLine(`cannot back up ${store} to ${file}; no copy was left`, error)
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      io.stdout.write(
        `Backed up ${store} to ${file} (${mebibytes(snapshot.pages * snapshot.pageSize)}) in ${seconds} s: ${counts.events} events, ` +
          `${counts.traces} traces, ${counts.datatrail} datatrail members and ${counts.heartbeats} heartbeats; integrity check ok.\n`
      )
    })
}

/** A rename is durable once the folder holding it is written to disk. */
async function syncFolder(path: string): Promise<void> {
  const folder = await open(path, 'r')
  await folder.sync().finally(() => folder.close())
}
