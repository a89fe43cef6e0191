import { Command } from 'commander'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { CliError } from './cli-error.js'
import { ImportBatch, totalOf, type ImportCounts } from './import-batch.js'
import type { CliIo } from './io.js'
import { mebibytes, progressBar } from './progress.js'
import { withStore } from './store.js'

const BATCH = 5000
/** Lines between two progress updates: a bar redraw per line would cost more than the line. */
const PROGRESS_EVERY = 1000

export function importCommand(io: CliIo): Command {
  return new Command('import')
    .description('load events, traces, datatrail members and heartbeats from an NDJSON file, in bulk')
    .argument(
      '<file>',
      'one JSON object a line: an event as POST /v1/events takes it, or with "kind": "trace", "datatrail" ' +
        '(event_no, member and the six fields) or "heartbeat" (as POST /v1/event-tracer/heartbeats takes it)'
    )
    .action(async (file: string) => {
      const started = performance.now()
      const size = await fileSize(file)
      // Loaded when importing: every other command, `serve` included, parses its arguments with this module.
      const { recordParser, RecordError } = await import('./ndjson-records.js')
      const counts = await withStore(io, 'create', async (store, config) => {
        const now = Date.now() / 1000
        const batch = new ImportBatch(store, now)
        const parse = recordParser(config.TRACER_SITES, now)
        // Before the file is opened: lines read while the bar's module loads would be lost.
        const progress = await progressBar(io.stderr, size, { label: 'Importing', format: mebibytes })
        const input = createReadStream(file)
        const lines = createInterface({ input, crlfDelay: Infinity })
        let lineNo = 0
        try {
          for await (const line of lines) {
            lineNo++
            if (lineNo % PROGRESS_EVERY === 0) progress.update(input.bytesRead)
            // A byte order mark some editors write would make the first line invalid JSON.
            const text = lineNo === 1 ? line.replace(/^\uFEFF/, '') : line
            if (text.trim() === '') continue
            let record
            try {
              record = parse(text)
            } catch (error) {
              if (!(error instanceof RecordError)) throw error
              // Everything before the bad line is stored, so it can be fixed and the import run again.
              await batch.flush()
              progress.stop()
              io.stdout.write(`${summary(batch.written, started)}, from the lines before line ${lineNo}.\n`)
              throw new CliError(`${file} line ${lineNo}: ${error.message}`)
            }
            batch.add(record)
            if (batch.size >= BATCH) await batch.flush()
          }
          await batch.flush()
          return batch.written
        } finally {
          progress.stop()
          lines.close()
          input.destroy()
        }
      })
      io.stdout.write(`${summary(counts, started)}.\n`)
    })
}

async function fileSize(file: string): Promise<number> {
  try {
    const info = await stat(file)
    if (!info.isFile()) throw new CliError(`${file} is not a file`)
    return info.size
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }
}

function summary(counts: ImportCounts, started: number): string {
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  return (
    `Imported ${totalOf(counts)} records in ${seconds} s: ${counts.events} events, ${counts.traces} traces, ` +
    `${counts.datatrail} datatrail members, ${counts.heartbeats} heartbeats (${counts.newHeartbeats} new)`
  )
}
