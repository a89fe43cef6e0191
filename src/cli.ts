#!/usr/bin/env node
import { Command } from 'commander'
import { writeFileSync } from 'node:fs'
import { usersCommand } from './cli/users.js'
import { CliError } from './cli/errors.js'
import { ConfigError } from './config.js'
import { generateOpenApiYaml } from './openapi.js'
import { packageVersion } from './package-info.js'
import { startServer } from './server.js'

const program = new Command('tracer')
  .description('frb-tracer: tokens, events and the baseband event tracer')
  .version(packageVersion)
  .showHelpAfterError()

program
  .command('serve')
  .description('serve the HTTP API (configured by the environment; see README)')
  .action(async () => {
    await startServer()
  })

program.addCommand(usersCommand())

program
  .command('openapi')
  .description('print openapi.yaml as the route schemas describe it')
  .option('-o, --output <file>', 'write to this file instead of standard output')
  .action(async (options: { output?: string }) => {
    const yaml = await generateOpenApiYaml()
    if (options.output === undefined) process.stdout.write(yaml)
    else writeFileSync(options.output, yaml)
  })

program.parseAsync().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof CliError) {
    console.error(`tracer: ${error.message}`)
  } else {
    console.error(error)
  }
  process.exitCode = 1
})
