import { Command } from 'commander'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { InputError } from '../domain/input-error.js'
import { utf8Text } from '../domain/strict-json.js'
import { boundedLines, LineTooLongError } from './bounded-lines.js'
import { CliError } from '../cli-error.js'
import type { Store } from '../store/port.js'
import type { CliIo } from './io.js'
import type { ImportLists, ImportRecord } from './ndjson-records.js'
import { mebibytes, progressBar } from './progress.js'
import { withStore } from './store.js'
import { printable } from './text-table.js'

const BATCH = 5000
/** Lines between two progress updates: a bar redraw per line would cost more than the line. */
const PROGRESS_EVERY = 1000
/** The longest line imported: a record as large as the biggest body a route accepts (1 MiB). */
const MAX_LINE_BYTES = 1024 * 1024
const BYTE_ORDER_MARK = '\uFEFF'

export function importCommand(io: CliIo): Command {
  return new Command('import')
    .description('load events, traces, datatrail members and heartbeats from an NDJSON file, in bulk')
    .argument(
      '<file>',
      'one JSON object a line: an event as POST /v1/events takes it, or with "kind": "trace" (event_no and ' +
        'stages/... keys, each as update-trace takes it), "datatrail" (event_no, member and the six fields) or ' +
        '"heartbeat" (as POST /v1/event-tracer/heartbeats takes it)'
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
        let lineNo = 0
        /** Everything before the bad line is stored, so it can be fixed and the import run again. */
        const stopAt = async (badLine: number, reason: string) => {
          await batch.flush()
          progress.stop()
          io.stdout.write(`${summary(batch.written, started)}, from the lines before line ${badLine}.\n`)
          // A reason may quote the line (JSON.parse's excerpt, a member's name): never its raw bytes.
          return new CliError(`${file} line ${badLine}: ${printable(reason)}`)
        }
        try {
          for await (const line of boundedLines(input, MAX_LINE_BYTES)) {
            lineNo = line.lineNo
            if (lineNo % PROGRESS_EVERY === 0) progress.update(input.bytesRead)
            let record
            try {
              const text = utf8Text(line.bytes)
              // A byte order mark some editors write would make the first line invalid JSON.
              const json = lineNo === 1 && text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text
              if (json.trim() === '') continue
              record = parse(json)
            } catch (error) {
              if (error instanceof RecordError) throw await stopAt(lineNo, error.message)
              if (error instanceof InputError) throw await stopAt(lineNo, `the line ${error.reason}`)
              throw error
            }
            batch.add(record)
            if (batch.size >= BATCH) await batch.flush()
          }
          await batch.flush()
          return batch.written
        } catch (error) {
          if (error instanceof LineTooLongError) {
            throw await stopAt(error.lineNo, `longer than ${MAX_LINE_BYTES} bytes (1 MiB), the most one record may take; nothing after it was read`)
          }
          throw error
        } finally {
          progress.stop()
          input.destroy()
        }
      }, 'write')
      io.stdout.write(`${summary(counts, started)}.\n`)
    })
}

async function fileSize(file: string): Promise<number> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${file} (${error.code ?? String(error)})`)
  })
  if (!info.isFile()) throw new CliError(`${file} is not a file`)
  return info.size
}

function summary(counts: ImportBatch['written'], started: number): string {
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const total = counts.events + counts.traces + counts.datatrail + counts.heartbeats
  return (
    `Imported ${total} records in ${seconds} s: ${counts.events} events, ${counts.traces} traces, ` +
    `${counts.datatrail} datatrail members, ${counts.heartbeats} heartbeats (${counts.newHeartbeats} new)`
  )
}

const noLists = (): ImportLists => ({ events: [], traces: [], datatrail: [], heartbeats: [] })

/** Records collected until `flush` writes them: one call of each bulk method, each one transaction. */
class ImportBatch {
  /** Of the heartbeats, `newHeartbeats` were not stored yet (the others are left as they are). */
  readonly written = { events: 0, traces: 0, datatrail: 0, heartbeats: 0, newHeartbeats: 0 }
  size = 0
  private lists = noLists()

  /** `now`: the write time of the heartbeats, s. */
  constructor(
    private readonly store: Store,
    private readonly now: number
  ) {}

  add({ kind, record }: ImportRecord): void {
    const list: unknown[] = this.lists[kind]
    list.push(record)
    this.size++
  }

  /** Events first: a reader then never sees a trace or heartbeat whose event is still missing. */
  async flush(): Promise<void> {
    const { events, traces, datatrail, heartbeats } = this.lists
    this.lists = noLists()
    this.size = 0
    if (events.length > 0) this.written.events += await this.store.events.upsert(events)
    if (traces.length > 0) this.written.traces += await this.store.traces.upsert(traces)
    if (datatrail.length > 0) {
      await this.store.datatrail.put(datatrail)
      this.written.datatrail += datatrail.length
    }
    if (heartbeats.length > 0) {
      this.written.newHeartbeats += await this.store.heartbeats.add(heartbeats, this.now)
      this.written.heartbeats += heartbeats.length
    }
  }
}
