import { PassThrough, Readable } from 'node:stream'
import { runProgram } from '../../src/cli/program.js'

export interface RunResult {
  status: number
  stdout: string
  stderr: string
}

export interface RunOptions {
  /** The output that is a terminal (100 columns wide), as the command sees it: none by default. */
  terminal?: 'stdout' | 'stderr'
}

/** Runs the `tracer` command in this process with `input` as standard input, capturing its output. */
export async function run(args: string[], env: Record<string, string>, input = '', { terminal }: RunOptions = {}): Promise<RunResult> {
  const output = (name: 'stdout' | 'stderr') =>
    name === terminal ? Object.assign(new PassThrough(), { isTTY: true, columns: 100 }) : new PassThrough()
  const stdout = output('stdout')
  const stderr = output('stderr')
  const chunks = { stdout: '', stderr: '' }
  stdout.on('data', (chunk) => (chunks.stdout += chunk))
  stderr.on('data', (chunk) => (chunks.stderr += chunk))
  const status = await runProgram(args, { env, stdin: Readable.from([input]), stdout, stderr })
  return { status, ...chunks }
}
