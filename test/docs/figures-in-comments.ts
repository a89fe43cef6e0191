import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import t from 'tap'
import ts from 'typescript'

/*
 * Measured figures live in docs/performance.md and bench/results/, never in code comments, where
 * they go stale as the code moves on (issue 42). A comment keeps the reason for a choice; the
 * figure that showed it is linked, not copied. Constants of the design (a page of 50, a step of
 * 1 MiB, a timeout) are not measurements and are left alone.
 */

const ROOT = join(import.meta.dirname, '../../..')
const FOLDERS = ['src', 'plugins', 'schemas']

/** The forms a measurement takes in prose: a time in microseconds, a cost per request, a share of CPU, what something spent or cost. */
const MEASURED = [
  /\d\s?µs\b/,
  /pages? a request/,
  /\d\s?% of [^.;]*CPU/,
  /CPU[^.;]* \d+(\.\d+)?\s?%/,
  /\bspent (about )?\d/,
  /\bcost(s|ing)? (about |each |every |it |them )*\d/,
  /\bmeasured\b[^.;]*\d/
]

export function measuredFigures(comment: string): string[] {
  return MEASURED.flatMap((pattern) => pattern.exec(comment)?.[0] ?? [])
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** Every comment of a TypeScript source, with its line, found by the compiler's own scanner (a `//` in a string is no comment). */
function commentsOf(source: string): { line: number; text: string }[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, source)
  const file = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest)
  const comments: { line: number; text: string }[] = []
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.SingleLineCommentTrivia || token === ts.SyntaxKind.MultiLineCommentTrivia) {
      comments.push({ line: file.getLineAndCharacterOfPosition(scanner.getTokenPos()).line + 1, text: scanner.getTokenText().replace(/\s*\n\s*\*?\s*/g, ' ') })
    }
  }
  return comments
}

t.test('the check finds the figures that once sat in comments, and spares the constants of the design', async (t) => {
  const measured = [
    "log at every commit: 0.48 log pages a request, the index alone 10% of update-trace's CPU.",
    'four JSON edits of a kilobyte thrown away (the statement alone: 9.3 µs against 5.1)',
    'one for each write cost each update-trace about 1.3 µs of its 19.6',
    'a pass spaced over 45 minutes cost update-trace 4% of its CPU under load',
    'seeding 100,000 events spent 313 ms in them'
  ]
  for (const comment of measured) t.not(measuredFigures(comment).length, 0, comment)
  const design = [
    'Pages of 50, at most one every 160 ms: a full pass over a million kept audits within the hour',
    'Pages copied in one step of a backup: 256 pages of 4 KiB, 1 MiB, a few milliseconds of writing.',
    'needs the least memory (8 MiB a hash, the work of N = 2^14 with p = 5 in half its memory)',
    'a short lock costs a few ms, a long one a probe every 50 ms',
    'checked every tenth of it (at most every second): within 10% of the timeout.',
    'what it cost them before is in docs/performance.md'
  ]
  for (const comment of design) t.strictSame(measuredFigures(comment), [], comment)
})

t.test('no code comment of src/, plugins/ or schemas/ holds a measured figure: it belongs in docs/performance.md', async (t) => {
  const found: string[] = []
  let read = 0
  for (const path of FOLDERS.flatMap(sourceFiles)) {
    for (const { line, text } of commentsOf(readFileSync(join(ROOT, path), 'utf8'))) {
      read++
      for (const figure of measuredFigures(text)) found.push(`${relative(ROOT, join(ROOT, path))}:${line}: "${figure}"`)
    }
  }
  t.ok(read > 500, `${read} comments read: the scan found the sources' comments`)
  t.strictSame(found, [], 'move the figure to docs/performance.md or bench/results/, keep the reason in the comment')
})
