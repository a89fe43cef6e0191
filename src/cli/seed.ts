import { Command, InvalidArgumentError, Option } from 'commander'
import { CliError } from '../cli-error.js'
import type { CliIo } from './io.js'
import { progressBar } from './progress.js'
import { withStore } from './store.js'

/** A century, as the largest MAX_WINDOW_DAYS: further back the data would make no sense. */
const MAX_DAYS = 36_600

/** Option parsers: commander reports their errors as usage errors (exit status 1). */
function integerOption(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const value = Number(text)
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`Expected an integer from ${min} to ${max}.`)
    }
    return value
  }
}

function positiveNumber(max: number) {
  return (text: string): number => {
    const value = Number(text)
    if (text.trim() === '' || !(value > 0 && value <= max)) throw new InvalidArgumentError(`Expected a number above 0, at most ${max}.`)
    return value
  }
}

interface SeedCommandOptions {
  demo?: boolean
  events: number
  days: number
  seed: number
  firstEventNo: number
}

export function seedCommand(io: CliIo): Command {
  return new Command('seed')
    .description('fill the configured store with synthetic data, for demonstrations and load tests')
    .option('--demo', 'demo data: events, and traces, datatrail and heartbeats of baseband events (the only kind so far)')
    .addOption(new Option('--events <n>', 'number of events').argParser(integerOption(1)).default(2000))
    .addOption(new Option('--days <d>', 'spread the events over this many days up to now').argParser(positiveNumber(MAX_DAYS)).default(30))
    .addOption(new Option('--seed <n>', 'seed of the random generator: the same seed makes the same data').argParser(integerOption(0, 0xffff_ffff)).default(1))
    .addOption(new Option('--first-event-no <n>', 'event_no of the first event; the others count up from it').argParser(integerOption(0)).default(1))
    .action(async (options: SeedCommandOptions) => {
      if (options.demo !== true) throw new CliError('seed writes synthetic demo data only: add --demo')
      // Loaded when seeding: every other command, `serve` included, parses its arguments with this module.
      const { seedDemo, SeedOptionsError } = await import('../demo/generate.js')
      const started = performance.now()
      const counts = await withStore(io, 'create', async (store, config) => {
        // Upserts replace these events, but parts the new data does not overwrite would stay.
        if ((await store.events.find(options.firstEventNo)) !== null) {
          io.stderr.write(`tracer: warning: event ${options.firstEventNo} exists already; old traces, datatrail and heartbeats may stay\n`)
        }
        const progress = await progressBar(io.stderr, options.events, { label: 'Seeding events' })
        try {
          const { events, days, seed, firstEventNo } = options
          const onProgress = (written: number) => progress.update(written)
          return await seedDemo(store, config.TRACER_SITES, { events, days, seed, now: Date.now(), firstEventNo, onProgress })
        } catch (error) {
          if (error instanceof SeedOptionsError) throw new CliError(error.message)
          throw error
        } finally {
          progress.stop()
        }
      }, 'write')
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      io.stdout.write(
        `Seeded ${counts.events} events (${counts.basebandEvents} asking for baseband data), ${counts.traces} traces, ` +
          `${counts.datatrail} datatrail members and ${counts.heartbeats} heartbeats in ${seconds} s.\n`
      )
    })
}
