import { appendFileSync } from 'node:fs'

/**
 * Module loader hooks that append the URL of every module loaded through `import` to a file: what
 * a process holds in memory. (Modules a CommonJS package requires itself are not seen; its entry is.)
 */
let logFile = ''

export function initialize(data: { file: string }) {
  logFile = data.file
}

export async function load(url: string, context: unknown, nextLoad: (url: string, context: unknown) => Promise<unknown>) {
  appendFileSync(logFile, url + '\n')
  return nextLoad(url, context)
}
