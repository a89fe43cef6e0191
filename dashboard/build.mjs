// Builds the operator dashboard into dist/dashboard/: one hashed script, one hashed stylesheet,
// index.html naming them, and the icon. No inline script or style, nothing from another origin.
// With --if-changed it builds only when a file the last build read is newer than that build.
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const outdir = join(here, '..', 'dist', 'dashboard')
/** What the last build read and wrote, and when it began; outside outdir, which the server serves. */
const record = join(here, '..', 'dist', '.dashboard-build.json')
/** Read by every build besides the modules esbuild bundles (which include src/ and schemas/ modules). */
const alwaysRead = [fileURLToPath(import.meta.url), join(here, 'favicon.svg'), join(here, 'tsconfig.json'), join(here, '..', 'package-lock.json')]

if (process.argv.includes('--if-changed') && (await upToDate())) process.exit(0)

// Loaded only to build: starting esbuild's service is most of the time an unchanged tree would take.
const { build } = await import('esbuild')
const started = Date.now()
await rm(record, { force: true })
await mkdir(outdir, { recursive: true })
// Only the files of earlier builds: the compiler keeps the page's sources for the unit tests in subfolders.
for (const entry of await readdir(outdir, { withFileTypes: true })) {
  if (entry.isFile()) await rm(join(outdir, entry.name))
}

const result = await build({
  entryPoints: { app: join(here, 'src', 'main.tsx') },
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: 'linked',
  entryNames: '[name]-[hash]',
  outdir,
  metafile: true,
  tsconfig: join(here, 'tsconfig.json'),
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'linked',
  logLevel: 'warning'
})

const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file))
const script = outputs.find((file) => file.endsWith('.js'))
const style = outputs.find((file) => file.endsWith('.css'))
if (script === undefined || style === undefined) throw new Error(`the build wrote no script or no stylesheet: ${outputs.join(', ')}`)

await copyFile(join(here, 'favicon.svg'), join(outdir, 'favicon.svg'))
await writeFile(
  join(outdir, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>frb-tracer · baseband callbacks</title>
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${style}">
<script type="module" src="${script}"></script>
</head>
<body>
<noscript><p>The dashboard needs JavaScript. The API is documented at <a href="/docs">/docs</a>.</p></noscript>
<div id="app"></div>
</body>
</html>
`
)
await writeFile(
  record,
  JSON.stringify({
    started,
    inputs: Object.keys(result.metafile.inputs).map((file) => resolve(file)),
    outputs: [script, style, 'favicon.svg', 'index.html'].map((file) => join(outdir, file))
  })
)

/** True when the last build's outputs are all there and nothing it read has changed since it began. */
async function upToDate() {
  try {
    const last = JSON.parse(await readFile(record, 'utf8'))
    await Promise.all(last.outputs.map((file) => stat(file)))
    const read = await Promise.all([...last.inputs, ...alwaysRead].map((file) => stat(file)))
    return read.every((file) => file.mtimeMs < last.started)
  } catch {
    // No record, an output or an input gone: build.
    return false
  }
}
