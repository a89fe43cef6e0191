// Builds the operator dashboard into dist/dashboard/: one hashed script, one hashed stylesheet,
// index.html naming them, and the icon. No inline script or style, nothing from another origin.
import { build } from 'esbuild'
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const outdir = join(here, '..', 'dist', 'dashboard')

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
