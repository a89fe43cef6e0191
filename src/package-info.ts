import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The project's root folder: the nearest folder above this module with our package.json. Found by
 * walking up because this module runs both from src/ (tests) and from dist/src/ (the built service).
 */
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

export const packageVersion = (
  JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }
).version
