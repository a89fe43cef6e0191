/** A failure to report to the user as one line, without a stack trace. */
export class CliError extends Error {
  override name = 'CliError'
}
