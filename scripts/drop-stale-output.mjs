#!/usr/bin/env node
// Removes what tsc compiled from a TypeScript file that no longer exists. The compile is
// incremental and never removes anything, so a test file renamed or merged into another would
// otherwise still run from dist/ on the machine that compiled it, and nowhere else.
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join, relative } from 'node:path'

const root = join(import.meta.dirname, '..')
const dist = join(root, 'dist')
for (const folder of ['src', 'plugins', 'schemas', 'test', 'bench']) {
  const compiled = join(dist, folder)
  if (!existsSync(compiled)) continue
  for (const entry of readdirSync(compiled, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue
    const output = join(entry.parentPath, entry.name)
    const source = join(root, relative(dist, output)).replace(/\.js$/, '.ts')
    if (existsSync(source)) continue
    rmSync(output)
    rmSync(`${output}.map`, { force: true })
  }
}
