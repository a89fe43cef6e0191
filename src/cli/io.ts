import { Console } from 'node:console'

/** What a command reads and writes: the process's own in production, captured ones in tests. */
export interface CliIo {
  env: NodeJS.ProcessEnv
  stdin: NodeJS.ReadableStream
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

export const processIo = (): CliIo => ({ env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr })

/** console.log and console.table, but onto the command's own streams. */
export const consoleOf = (io: CliIo) => new Console({ stdout: io.stdout, stderr: io.stderr })
