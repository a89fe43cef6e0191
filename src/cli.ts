#!/usr/bin/env node
import cluster from 'node:cluster'
import { Writable } from 'node:stream'
import { processIo } from './cli/io.js'
import { runProgram } from './cli/program.js'
import { exitSaying } from './cluster/roles.js'

const argv = process.argv.slice(2)
if (cluster.isWorker) {
  // A worker that cannot start says why through its primary, which prints a reason every worker meets once.
  let said = ''
  const stderr = new Writable({ write: (chunk, _encoding, done) => ((said += String(chunk)), done()) })
  const status = await runProgram(argv, { ...processIo(), stderr })
  // Its channel to the primary keeps it running, even one that failed to start.
  if (status !== 0) exitSaying(said, status)
} else {
  // The exit code is set, not forced, so a server started by `serve` keeps running.
  process.exitCode = await runProgram(argv)
}
