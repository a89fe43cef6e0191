import { CommanderError } from 'commander'
import { CliError } from '../cli-error.js'

/**
 * The audit's exit statuses, for cron and monitoring jobs: 0 nothing stuck or contradictory, 1 some
 * event is (or the audit could not run), 2 the command line is wrong, 3 the window held no baseband
 * event at all and `--expect-events` said that is wrong too. The other commands end with 1 on any
 * mistake, usage errors included, as they always have.
 */
export const AUDIT_EXIT = { clean: 0, flagged: 1, usage: 2, empty: 3, mismatch: 4 } as const

/** Where a command that ran to its end reports an exit status other than 0 (the audit: 1 when something is flagged). */
export interface CommandOutcome {
  status: number
}

/** A mistake in the command line found by the command itself (options that only go together). */
export const usageError = (message: string, exitStatus: number) => new CliError(message, exitStatus)

/** An exitOverride callback: commander's usage errors end with `status`; help and version still with 0. */
export const usageErrorsExitWith = (status: number) => (error: CommanderError) => {
  throw error.exitCode === 0 ? error : new CommanderError(status, error.code, error.message)
}
