#!/usr/bin/env node
import cluster from 'node:cluster'
import { runProgram } from './cli/program.js'

// The exit code is set, not forced, so a server started by `serve` keeps running.
process.exitCode = await runProgram(process.argv.slice(2))
// A worker's channel to its primary keeps it running, even one that failed to start.
if (cluster.isWorker && process.exitCode !== 0) process.exit()
