import { PassThrough, Readable } from 'node:stream'
import { runProgram } from '../../src/cli/program.js'

export interface RunResult {
  status: number
  stdout: string
  stderr: string
}

/** Runs the `tracer` command in this process with `input` as standard input, capturing its output. */
export async function run(args: string[], env: Record<string, string>, input = ''): Promise<RunResult> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const chunks = { stdout: '', stderr: '' }
  stdout.on('data', (chunk) => (chunks.stdout += chunk))
  stderr.on('data', (chunk) => (chunks.stderr += chunk))
  const status = await runProgram(args, { env, stdin: Readable.from([input]), stdout, stderr })
  return { status, ...chunks }
}
