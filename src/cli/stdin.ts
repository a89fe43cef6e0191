import { createInterface } from 'node:readline'

/** The first line of standard input, without its line ending; rejects when there is none. */
export function readLineFromStdin(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input, terminal: false })
    let settled = false
    lines.once('line', (line) => {
      settled = true
      lines.close()
      resolve(line)
    })
    lines.once('close', () => {
      if (!settled) reject(new Error('standard input ended before a line was read'))
    })
  })
}
