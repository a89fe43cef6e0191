import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import t from 'tap'
import './docs/figures-in-comments.js'

/*
 * The README and docs/ as a reader follows them: every relative link reaches a file, every anchor a
 * heading of the page it names, and the README stays short enough to read (issue 32).
 */

/** The repository's root: this file runs from dist/test/. */
const ROOT = join(import.meta.dirname, '../..')

/** The pages each audience is sent to from the README. */
const PAGES = ['integrators', 'operations', 'audit', 'dashboard', 'mongodb', 'configuration', 'performance', 'architecture', 'development', 'backup']

function markdownFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return markdownFiles(path)
    return entry.name.endsWith('.md') ? [path] : []
  })
}

/** The text a reader sees as prose: fenced blocks and code spans hold no links. */
function prose(markdown: string): string {
  return markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').replace(/`+[^`\n]*`+/g, '')
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '')
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a page offers: its headings (a repeated one gets -1, -2, as on GitHub) and any `id` or `name` of its HTML. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const text = markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '')
  for (const [, heading] of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = slugOf(heading!)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!)
  return anchors
}

/** The relative links of a page, where they point: web addresses left out. */
export function linksOf(markdown: string): string[] {
  const targets: string[] = []
  for (const [, target] of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue
    targets.push(target!)
  }
  return targets
}

/** What is wrong with each link of `file` (a path from the root), as lines naming the link. */
export function brokenLinks(file: string, read: (path: string) => string | undefined): string[] {
  const text = read(file)
  if (text === undefined) return [`${file} cannot be read`]
  const broken: string[] = []
  for (const link of linksOf(text)) {
    const [path = '', anchor] = link.split('#', 2) as [string, string | undefined]
    const target = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)))
    if (target.startsWith('..')) {
      broken.push(`${file}: ${link} leaves the repository`)
      continue
    }
    const page = read(target)
    if (page === undefined && !existsSync(join(ROOT, target))) {
      broken.push(`${file}: ${link} names ${target}, which does not exist`)
      continue
    }
    if (anchor === undefined) continue
    if (page === undefined || !target.endsWith('.md')) broken.push(`${file}: ${link} has an anchor, but ${target} is no Markdown page`)
    else if (!anchorsOf(page).has(anchor)) broken.push(`${file}: ${link} names no heading of ${target}`)
  }
  return broken
}

const readFromRoot = (path: string): string | undefined => {
  const full = join(ROOT, path)
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined
}

const PAGES_READ = ['README.md', ...markdownFiles('docs')]

t.test('every relative link and anchor of the README and docs/ resolves', async (t) => {
  const links = PAGES_READ.flatMap((file) => linksOf(readFromRoot(file)!))
  t.ok(links.length > 100, `${links.length} links read`)
  t.ok(links.some((link) => link.includes('#')), 'anchors among them')
  t.strictSame(PAGES_READ.flatMap((file) => brokenLinks(file, readFromRoot)), [])
})

t.test('the check finds a missing page, a missing anchor and a link out of the repository', async (t) => {
  const pages: Record<string, string> = {
    'README.md': '# Title\n\n## Two words\n\n[ok](#two-words) [page](docs/a.md#a-heading) [gone](docs/gone.md) [no](#nowhere) [out](../x.md)\n`[code](docs/gone.md)`\n',
    'docs/a.md': '# A heading\n\n[back](../README.md#title) [dup](#a-heading-1)\n\n## A heading\n'
  }
  const read = (path: string) => pages[path]
  t.strictSame(brokenLinks('README.md', read), [
    'README.md: docs/gone.md names docs/gone.md, which does not exist',
    'README.md: #nowhere names no heading of README.md',
    'README.md: ../x.md leaves the repository'
  ])
  t.strictSame(brokenLinks('docs/a.md', read), [], 'a repeated heading is reached with -1')
  t.equal(slugOf('Every core (`WORKERS`)'), 'every-core-workers')
  t.equal(slugOf("The live stream's feed"), 'the-live-streams-feed')
})

t.test('the README is short, and sends each audience to its page of docs/', async (t) => {
  const readme = readFromRoot('README.md')!
  t.ok(Buffer.byteLength(readme) < 20_000, `README.md is ${Buffer.byteLength(readme)} bytes`)
  const linked = new Set(linksOf(readme).map((link) => link.split('#')[0]))
  for (const page of PAGES) {
    t.ok(existsSync(join(ROOT, 'docs', `${page}.md`)), `docs/${page}.md exists`)
    t.ok(linked.has(`docs/${page}.md`), `the README links docs/${page}.md`)
  }
  for (const file of markdownFiles('docs')) t.ok(linked.has(relative(ROOT, join(ROOT, file))), `the README's map names ${file}`)
  t.match(readme, 'bench/results/latest.md', 'the figures are the bench’s, linked, not copied')
})
