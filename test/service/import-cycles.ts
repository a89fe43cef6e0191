import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import t from 'tap'

/** The repository's root: this file runs from dist/test/service/. */
const ROOT = join(import.meta.dirname, '../../..')
const SOURCE_FOLDERS = ['src', 'plugins', 'schemas']

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** Every relative import and re-export of a file, type-only ones included: a cycle of types is a cycle of meaning too. */
function importsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const targets: string[] = []
  for (const match of text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms)) {
    const target = normalize(join(dirname(file), match[1]!.replace(/\.js$/, '.ts')))
    if (known.has(target)) targets.push(target)
  }
  return targets
}

/** The groups of files that import each other round in a circle (Tarjan's strongly connected components of more than one file, or a file importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file)!) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const group: string[] = []
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member)
      group.push(member)
      if (member === file) break
    }
    if (group.length > 1 || graph.get(file)!.includes(file)) found.push(group.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

t.test('no module of src/, plugins/ or schemas/ imports itself back through others', async (t) => {
  const files = SOURCE_FOLDERS.flatMap(sourceFiles).map((file) => relative(ROOT, join(ROOT, file)))
  const known = new Set(files)
  const graph = new Map(files.map((file) => [file, importsOf(file, known)]))
  t.ok(graph.size > 100, `${graph.size} modules read`)
  t.ok([...graph.values()].some((targets) => targets.length > 0), 'their imports were read')
  t.strictSame(cycles(graph), [])
})

/**
 * The layer a module belongs to: a folder of src/ (src/store, src/cli, ...), a file at the top of
 * src/ alone, plugins/ and schemas/ each as a whole.
 */
const layerOf = (file: string) => {
  const parts = file.split('/')
  return parts[0] === 'src' && parts.length > 2 ? `src/${parts[1]}` : parts[0] === 'src' ? file : parts[0]!
}

t.test('the layers point one way: no folder of src/ (nor plugins/, schemas/) imports one that imports it back', async (t) => {
  const files = SOURCE_FOLDERS.flatMap(sourceFiles).map((file) => relative(ROOT, join(ROOT, file)))
  const known = new Set(files)
  const layers = new Map<string, Set<string>>()
  for (const file of files) {
    const from = layerOf(file)
    const targets = layers.get(from) ?? new Set<string>()
    for (const target of importsOf(file, known)) if (layerOf(target) !== from) targets.add(layerOf(target))
    layers.set(from, targets)
  }
  t.ok(layers.get('src/cli')?.has('src/store'), 'the layers’ imports were read')
  t.strictSame(cycles(new Map([...layers].map(([layer, targets]) => [layer, [...targets]]))), [])
})

t.test('every better-sqlite3 connection is opened kept alive: none is constructed outside native-lifetimes.ts, in the service, its tests or its bench', async (t) => {
  const folders = [...SOURCE_FOLDERS, 'test', 'bench']
  const files = folders.flatMap(sourceFiles)
  t.ok(files.length > 300, `${files.length} files read`)
  // On Node 24 a collected connection or statement aborts the process (see native-lifetimes.ts).
  const opening = files.filter((file) => file !== join('src', 'store', 'sqlite', 'native-lifetimes.ts') && /\bnew\s+Database\s*\(/.test(readFileSync(join(ROOT, file), 'utf8')))
  t.strictSame(opening, [], 'open connections with openKeptDatabase')
})

/**
 * The rooms of src/infrastructure/ (src/infrastructure/README.md): the HTTP layer imports no other
 * room, streamed responses build on the HTTP layer, the live stream stands alone, and no room
 * imports the plugins left at the folder's top, which may use any room.
 */
const INFRASTRUCTURE_ROOMS: Record<string, string[]> = {
  http: [],
  'live-stream': [],
  'streamed-responses': ['http'],
  '(top)': ['http', 'live-stream', 'streamed-responses']
}

t.test('the rooms of src/infrastructure/ import each other only in the documented direction', async (t) => {
  const files = SOURCE_FOLDERS.flatMap(sourceFiles).map((file) => relative(ROOT, join(ROOT, file)))
  const known = new Set(files)
  const roomOf = (file: string) => {
    const parts = file.split('/')
    if (parts[0] !== 'src' || parts[1] !== 'infrastructure') return undefined
    return parts.length > 3 ? parts[2]! : '(top)'
  }
  const crossings = new Set<string>()
  const against: string[] = []
  for (const file of files) {
    const from = roomOf(file)
    if (from === undefined) continue
    t.ok(from in INFRASTRUCTURE_ROOMS, `${file} is in a documented room`)
    for (const target of importsOf(file, known)) {
      const to = roomOf(target)
      if (to === undefined || to === from) continue
      crossings.add(`${from} -> ${to}`)
      if (!INFRASTRUCTURE_ROOMS[from]?.includes(to)) against.push(`${file} imports ${target}`)
    }
  }
  t.ok(crossings.has('streamed-responses -> http'), `the rooms' imports were read: ${[...crossings].join(', ')}`)
  t.strictSame(against, [], 'each import follows the direction src/infrastructure/README.md documents')
})

/**
 * The layer list of docs/architecture.md ("The layers and which way they point"), read from the
 * page: each item's paths (those named before its first colon, outside parentheses) and its rank.
 */
function documentedLayers(): Map<string, number> {
  const page = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')
  const section = page.split('## The layers and which way they point')[1]!.split('\n## ')[0]!
  const ranks = new Map<string, number>()
  for (const item of section.split(/\n(?=\d+\. )/).filter((text) => /^\d+\. /.test(text))) {
    const rank = Number(/^(\d+)\. /.exec(item)![1])
    const named = item.replace(/\([^)]*\)/g, '').split(':')[0]!
    for (const [, path] of named.matchAll(/`([^`]+)`/g)) ranks.set(path!.replace(/\/$/, ''), rank)
  }
  return ranks
}

t.test('every import points up the layer list of docs/architecture.md, as the page says', async (t) => {
  const ranks = documentedLayers()
  t.ok(ranks.size >= 20 && ranks.get('src/cli') === 11 && ranks.get('src/vocabulary.ts') === 1, `${ranks.size} paths read from the page`)
  const files = SOURCE_FOLDERS.flatMap(sourceFiles).map((file) => relative(ROOT, join(ROOT, file)))
  const known = new Set(files)
  const unlisted = new Set<string>()
  const downward: string[] = []
  for (const file of files) {
    const from = ranks.get(layerOf(file))
    if (from === undefined) unlisted.add(layerOf(file))
    for (const target of importsOf(file, known)) {
      const to = ranks.get(layerOf(target))
      if (from !== undefined && to !== undefined && to > from) downward.push(`${file} (layer ${from}) imports ${target} (layer ${to})`)
    }
  }
  t.strictSame([...unlisted], [], 'every folder of src/ and every file at its top is in the list')
  t.strictSame(downward, [], 'no layer imports one listed after it')
})
