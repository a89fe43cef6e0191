import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The nearest folder above with our package.json: this module runs from src/ (tests) and from dist/src/. */
export const projectRoot = (() => {
  let folder = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: string }
      if (manifest.name === 'frb-tracer') return folder
    } catch {
      // no package.json here; keep walking
    }
    const parent = dirname(folder)
    if (parent === folder) throw new Error('package.json of frb-tracer not found above ' + import.meta.url)
    folder = parent
  }
})()

const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string; scripts?: Record<string, string> }

export const packageVersion = manifest.version

/** How `npm start` runs the service, so that the process tests and the bench start it exactly as deployed. */
const serveCommand = /&& ((?:[A-Z_]+=\S+ )*)exec node ((?:--\S+ )*)dist\/src\/cli\.js serve$/.exec(manifest.scripts?.start ?? '')
const words = (text: string | undefined) => (text ?? '').split(' ').filter((word) => word !== '')

/** The node options of `npm start` (how the heap grows). */
export const serveNodeOptions: string[] = words(serveCommand?.[2])

/** The environment `npm start` sets before node (how the C allocator gives memory back). */
export const serveEnvironment: Record<string, string> = Object.fromEntries(
  words(serveCommand?.[1]).map((assignment) => {
    const equals = assignment.indexOf('=')
    return [assignment.slice(0, equals), assignment.slice(equals + 1)]
  })
)
