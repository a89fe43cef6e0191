import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root, found from this compiled file (dist/bench/paths.js), so the scripts work from any cwd. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The built command-line tool: exactly what `npm start` runs. */
export const CLI = join(ROOT, 'dist/src/cli.js')
export const BARE_SERVER = join(ROOT, 'dist/bench/bare-server.js')
/** Bench-owned stores; gitignored (bench/.gitignore). */
export const DATA_DIR = join(ROOT, 'bench/.data')
export const RESULTS_DIR = join(ROOT, 'bench/results')
export const PROFILES_DIR = join(ROOT, 'bench/.profiles')
