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

const manifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  version: string
  scripts?: Record<string, string>
}

export const packageVersion = manifest.version

/**
 * The node options `npm start` serves with (how the heap grows), so that the process tests and the
 * bench, which start `dist/src/cli.js serve` themselves, run the service exactly as it is deployed.
 */
export const serveNodeOptions: string[] = (() => {
  const match = /\bnode ((?:--\S+ )*)dist\/src\/cli\.js serve$/.exec(manifest.scripts?.start ?? '')
  return (match?.[1] ?? '').split(' ').filter((option) => option !== '')
})()
