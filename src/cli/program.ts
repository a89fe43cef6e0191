import { Command, CommanderError } from 'commander'
import { writeFileSync } from 'node:fs'
import { ConfigError } from '../config.js'
import { packageVersion } from '../package-info.js'
import { AUDIT_EXIT, auditCommand, type CommandOutcome } from './audit.js'
import { backupCommand } from './backup.js'
import { CliError } from '../cli-error.js'
import { processIo, type CliIo } from './io.js'
import { importCommand } from './import.js'
import { seedCommand } from './seed.js'
import { withStore } from './store.js'
import { usersCommand } from './users.js'

/** The `tracer` command, reading and writing only through `io`; the audit sets its exit status in `outcome`. */
export function createProgram(io: CliIo = processIo(), outcome: CommandOutcome = { status: 0 }): Command {
  const program = new Command('tracer')
    .description('frb-tracer: tokens, events, the baseband event tracer and its audit')
    .version(packageVersion)

  program
    .command('serve')
    .description('serve the HTTP API (configured by the environment; see docs/configuration.md)')
    .action(async () => {
      // Loaded on demand, like `openapi` below, so that the other commands start in a blink.
      const { serve } = await import('./serve.js')
      await serve(io.env)
    })

  program.addCommand(usersCommand(io))
  program.addCommand(seedCommand(io))
  program.addCommand(importCommand(io))
  program.addCommand(backupCommand(io))

  // An operator's decision, never a start's: a lease that lapsed may be an instance that is only held up.
  program
    .command('take-over')
    .description('remove the leases of instances that stopped without a clean stop (never a live one), so that the next start may change TRACER_SITES or STAGE_DEADLINES')
    .action(async () => {
      await withStore(io, 'refuse', async () => {}, 'take-over', { notify: (line) => void io.stdout.write(`${line}\n`) })
    })

  const audit = auditCommand(io, outcome)
  program.addCommand(audit)

  program
    .command('openapi')
    .description('print openapi.yaml as the route schemas describe it')
    .option('-o, --output <file>', 'write to this file instead of standard output')
    .action(async (options: { output?: string }) => {
      const { generateOpenApiYaml } = await import('../openapi.js')
      const yaml = await generateOpenApiYaml()
      if (options.output === undefined) io.stdout.write(yaml)
      else writeFileSync(options.output, yaml)
    })

  for (const command of allCommands(program)) {
    command
      .showHelpAfterError()
      // The audit's usage errors end with 2, apart from the 1 that means something is stuck; help and version with 0.
      .exitOverride(command === audit ? auditUsageError : undefined)
      .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
  }
  return program
}

function auditUsageError(error: CommanderError): never {
  throw error.exitCode === 0 ? error : new CommanderError(AUDIT_EXIT.usage, error.code, error.message)
}

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)]
}

/** Runs the program on `argv` (user arguments only); resolves to the exit status. */
export async function runProgram(argv: string[], io: CliIo = processIo()): Promise<number> {
  const outcome: CommandOutcome = { status: 0 }
  try {
    await createProgram(io, outcome).parseAsync(argv, { from: 'user' })
    return outcome.status
  } catch (error) {
    // Commander has printed its own message (usage errors) or the help (exit code 0) already.
    if (error instanceof CommanderError) return error.exitCode
    if (error instanceof ConfigError || error instanceof CliError) io.stderr.write(`tracer: ${error.message}\n`)
    else io.stderr.write(`tracer: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    return error instanceof CliError ? error.exitStatus : 1
  }
}
