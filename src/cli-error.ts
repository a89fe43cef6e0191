/** A failure to report to the user as one line, without a stack trace, and the exit status it ends with. */
export class CliError extends Error {
  override name = 'CliError'

  constructor(
    message: string,
    readonly exitStatus = 1
  ) {
    super(message)
  }
}
