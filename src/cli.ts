#!/usr/bin/env node
import { runProgram } from './cli/program.js'

// The exit code is set, not forced, so a server started by `serve` keeps running.
process.exitCode = await runProgram(process.argv.slice(2))
