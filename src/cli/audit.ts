import { Command, InvalidArgumentError, Option } from 'commander'
import type { AuditSummary } from '../../schemas/audit.js'
import { once } from 'node:events'
import { factsOf } from '../domain/audit/kept-facts.js'
import { reportOf, type KeptReport, type WindowEntry } from '../domain/audit/kept-report.js'
import { listedRecord, WindowAudit } from '../domain/audit/window-audit.js'
import { parseDuration } from '../domain/duration.js'
import { InputError } from '../domain/input-error.js'
import type { WindowEventParts } from '../domain/records.js'
import { DAY_MS, readUtcTime, requiredWindow, toIsoUtc, type TimeWindow } from '../domain/time-window.js'
import { loadConfig, type Config } from '../config.js'
import { auditReportJson, reportWindow } from '../reports/audit-report.js'
import { keptWindow } from '../reports/kept-window.js'
import { windowParts } from '../reports/window-parts.js'
import type { AuditCheck } from '../kept-audit/keeper.js'
import { rebuildingReason } from '../kept-audit/rebuild.js'
import { EventNumberSet } from '../store/event-number-set.js'
import type { Store } from '../store/port.js'
import type { Sites } from '../vocabulary.js'
import { auditTable, flaggedRow, isFlagged } from './audit-table.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from './io.js'
import { withStore } from './store.js'

/** The audit's exit statuses, for cron and monitoring jobs (docs/operations.md); other commands end with 1 on any mistake. */
export const AUDIT_EXIT = { clean: 0, flagged: 1, usage: 2, empty: 3, mismatch: 4 } as const

/** Where a command that ran to its end reports an exit status other than 0. */
export interface CommandOutcome {
  status: number
}

const DEFAULT_SINCE = '7d'
const VERIFY_PAGE = 1000

interface AuditOptions {
  since?: number
  start?: string
  end?: string
  format?: 'table' | 'json'
  expectEvents?: boolean
  recompute?: boolean
}

function duration(text: string): number {
  try {
    return parseDuration(text)
  } catch (error) {
    throw new InvalidArgumentError(`Expected a duration such as 7d, 12h, 90m or 30s: ${(error as Error).message}.`)
  }
}

function time(text: string): string {
  const reading = readUtcTime(text)
  if ('time' in reading) return text
  if (reading.outside) throw new InvalidArgumentError(`The time ${reading.refused}.`)
  throw new InvalidArgumentError('Expected a date YYYY-MM-DD or an ISO 8601 date-time, such as 2026-03-01T12:00Z.')
}

/** `tracer audit`: the route's audit made from the records, not the kept audit: a kept row no service checked lately gives no false all-clear. */
export function auditCommand(io: CliIo, outcome: CommandOutcome): Command {
  return new Command('audit')
    .description(
      'audit the baseband events of a window: their traces against their datatrail, heartbeats and stage deadlines. ' +
        'Exit status 0 when no event is stuck or contradictory, 1 when some are (or the audit could not run), 2 on a usage error, ' +
        `${AUDIT_EXIT.empty} with --expect-events when the window holds no baseband event`
    )
    .addOption(
      new Option('--since <duration>', `the window up to now: 7d, 12h, 90m, 30s (default ${DEFAULT_SINCE})`)
        .argParser(duration)
        .conflicts(['start', 'end'])
    )
    .addOption(new Option('--start <time>', 'start of the window (inclusive), with --end: YYYY-MM-DD or an ISO 8601 date-time').argParser(time))
    .addOption(new Option('--end <time>', 'end of the window (exclusive), with --start').argParser(time))
    .addOption(new Option('--format <format>', 'table (the default on a terminal) or json (the default otherwise)').choices(['table', 'json']))
    .option(
      '--recompute',
      'check every kept audit and kept column of the whole store against its records first ' +
        `(any that differed is repaired, named on standard error, and makes the exit status ${AUDIT_EXIT.mismatch}); ` +
        'without it, those of the window are only named'
    )
    .option(
      '--expect-events',
      `exit with status ${AUDIT_EXIT.empty} when the window holds no baseband event at all (for cron: a silent pipeline is not an all-clear)`
    )
    .action(async (options: AuditOptions) => {
      const config = loadConfig(io.env)
      const now = Date.now()
      const window = windowOf(options, config, now)
      const format = options.format ?? ((io.stdout as { isTTY?: boolean }).isTTY === true ? 'table' : 'json')
      const audit = new WindowAudit({ sites: config.TRACER_SITES, deadlines: config.STAGE_DEADLINES, now })
      const print = format === 'json' ? printJson : printTable
      const recompute = options.recompute === true
      let mismatches = 0
      const audited = async (store: Store) => {
        // A rebuild left under way (only a read finds one: --recompute makes it first): every row it has not reached would be named as differing.
        const rebuilding = store.keptAudit.rebuilding()
        if (rebuilding !== null) throw new CliError(`${rebuildingReason(rebuilding)} A serving instance makes it; --recompute makes it here first.`)
        if (recompute) mismatches = await verifyKeptAudits(io, store, now)
        const held: HeldWindow = { checked: 0, differed: [] }
        const source = () => (recompute ? recomputedWindow(store, window, config.TRACER_SITES) : heldToRecords(store, window, config.TRACER_SITES, now, held))
        await cutShortSaid(() => print(io, source, window, audit))
        nameHeld(io, held)
      }
      // --recompute repairs kept audits: it writes, so it must be made with the store's own deadlines
      // too (repairs made with other deadlines would be undone by every instance's verifier, and back).
      await withStore(io, 'refuse', audited, recompute ? 'write' : 'read', { access: recompute ? 'read-write' : 'read-only' })
      outcome.status = mismatches > 0 ? AUDIT_EXIT.mismatch : exitStatusOf(audit.summary, options.expectEvents === true)
    })
}

function exitStatusOf(summary: AuditSummary, expectEvents: boolean): number {
  if (summary.stuck + summary.contradiction > 0) return AUDIT_EXIT.flagged
  return expectEvents && summary.events === 0 ? AUDIT_EXIT.empty : AUDIT_EXIT.clean
}

/** `--since` (7 days unless given) up to now, or `--start` and `--end`: at most MAX_WINDOW_DAYS, as on the route. */
function windowOf(options: AuditOptions, config: Config, now: number): TimeWindow {
  const maxDays = config.MAX_WINDOW_DAYS
  if (options.start === undefined && options.end === undefined) {
    const since = options.since ?? parseDuration(DEFAULT_SINCE)
    if (since > maxDays * DAY_MS) throw new CliError(`--since is longer than MAX_WINDOW_DAYS (${maxDays} days)`, AUDIT_EXIT.usage)
    return { start: now - since, end: now }
  }
  if (options.start === undefined || options.end === undefined) throw new CliError('--start and --end go together (or give --since)', AUDIT_EXIT.usage)
  try {
    return requiredWindow({ start_time_utc: options.start, end_time_utc: options.end }, maxDays)
  } catch (error) {
    if (!(error instanceof InputError)) throw error
    const option = error.field[0] === 'start_time_utc' ? '--start' : '--end'
    throw new CliError(`${option} ${error.reason.replaceAll('start_time_utc', '--start')}`, AUDIT_EXIT.usage)
  }
}

/** Where the audited events come from: the records, as they are read. */
type AuditSource = () => AsyncIterable<readonly WindowEntry[]>

/** A page's events with reports made from their records, as the kept audit must have them: the reference. */
const reportsOf = (page: readonly WindowEventParts[], sites: Sites): KeptReport[] =>
  page.map((parts) => reportOf(factsOf(parts.event.event_no, parts, sites), sites)).filter((report) => report !== null)

/** The window's audit made from its records (`--recompute`, after it repaired the kept audit). */
async function* recomputedWindow(store: Store, window: TimeWindow, sites: Sites): AsyncGenerator<KeptReport[]> {
  for await (const page of windowParts(store, window)) yield reportsOf(page, sites)
}

/** What the plain command found of the window's kept state: each event that differed, with how. */
interface HeldWindow {
  checked: number
  differed: AuditCheck[]
}

/**
 * The window's audit made from its records, with the kept state of the same events held to them on
 * the way, read only: each page's kept audits and columns, then kept rows the records leave out.
 */
async function* heldToRecords(store: Store, window: TimeWindow, sites: Sites, now: number, held: HeldWindow): AsyncGenerator<KeptReport[]> {
  const seen = new EventNumberSet()
  const hold = async (eventNos: number[]) => {
    if (eventNos.length === 0) return
    held.checked += eventNos.length
    const found = await store.audits.check(eventNos, now, { repair: false })
    if (found.mismatches.length + found.unreadable.length + found.columns.length > 0) held.differed.push(found)
  }
  for await (const page of windowParts(store, window)) {
    await hold(page.map((parts) => parts.event.event_no).filter((eventNo) => seen.add(eventNo)))
    yield reportsOf(page, sites)
  }
  for await (const entries of keptWindow(store, window)) await hold(entries.map((entry) => entry.event_no).filter((eventNo) => seen.add(eventNo)))
}

/** Each difference on standard error: `verb` differs or differed, then what became of it. */
function nameDifferences(io: CliIo, { mismatches, columns, unreadable }: AuditCheck, verb: string, outcome: string): void {
  for (const { event_no, parts } of mismatches) {
    io.stderr.write(`event ${event_no}: the kept audit ${verb} from its records (${parts.join(', ')}); ${outcome}\n`)
  }
  for (const { event_no, column } of columns) io.stderr.write(`event ${event_no}: the kept ${column} ${verb} from its records; ${outcome}\n`)
  for (const { event_no, error } of unreadable) io.stderr.write(`event ${event_no}: its records cannot be read (${error}); its kept audit was not checked\n`)
}

/** What the plain command found, named with what repairs it. */
function nameHeld(io: CliIo, held: HeldWindow): void {
  const events = new Set<number>()
  const unrepaired = 'not repaired here (this command writes nothing): a serving instance or `tracer audit --recompute` repairs it'
  for (const found of held.differed) {
    nameDifferences(io, found, 'differs', unrepaired)
    for (const { event_no } of [...found.mismatches, ...found.columns]) events.add(event_no)
  }
  if (events.size > 0) io.stderr.write(`kept state of the window held against the records: ${held.checked} events, ${events.size} differed (each named above); the report is made from the records\n`)
}

/** Every kept audit of the store held against its records a page at a time; each that differed is repaired and named. */
async function verifyKeptAudits(io: CliIo, store: Store, now: number): Promise<number> {
  let checked = 0
  let differed = 0
  for (let after = -1; ; ) {
    const result = await store.audits.verify(after, VERIFY_PAGE, now)
    checked += result.checked
    differed += result.mismatches.length + result.unreadable.length + result.columns.length
    nameDifferences(io, result, 'differed', 'repaired')
    if (result.last === null) break
    after = result.last
  }
  io.stderr.write(`kept audit checked against the records: ${checked} events, ${differed} differed${differed > 0 ? ' (each named above)' : ''}\n`)
  return differed
}

/** The route's JSON report, written as it is made, at the pace standard output takes it. */
async function printJson(io: CliIo, source: AuditSource, window: TimeWindow, audit: WindowAudit) {
  for await (const fragment of auditReportJson(source(), window, audit, (event) => JSON.stringify(event))) {
    if (!io.stdout.write(fragment)) await once(io.stdout, 'drain')
  }
  io.stdout.write('\n')
}

/** The counts come first, so the flagged events' lines wait until the whole window is audited. */
async function printTable(io: CliIo, source: AuditSource, window: TimeWindow, audit: WindowAudit) {
  const flagged: string[][] = []
  for await (const events of audit.pages(source())) {
    for (const event of events.map(listedRecord)) if (isFlagged(event)) flagged.push(flaggedRow(event, audit.settings.now))
  }
  io.stdout.write(auditTable(reportWindow(window), toIsoUtc(audit.settings.now), audit.summary, flagged))
}

/** A reader that left early (`| head`) saw part of the report: one line says so, not a stack. */
async function cutShortSaid(print: () => Promise<void>) {
  try {
    await print()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPIPE') throw new CliError('standard output was closed before the whole report was written')
    throw error
  }
}
