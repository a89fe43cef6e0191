import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { RecordWrites } from '../../src/store/sqlite/record-writes.js'
import type { SqliteKeptInWrites } from '../../src/store/sqlite/kept-in-writes.js'

const SQLITE_ADAPTER = join(import.meta.dirname, '../../../src/store/sqlite')
const RECORD_TABLES = ['events', 'traces', 'datatrail', 'heartbeats', 'transitions']
const WRITES_A_RECORD = new RegExp(`\\b(?:INSERT\\s+(?:OR\\s+\\w+\\s+)?INTO|UPDATE|DELETE\\s+FROM|REPLACE\\s+INTO)\\s+(?:main\\.)?(${RECORD_TABLES.join('|')})\\b`, 'i')
/**
 * The files that may write a record table straight: the migrations, the start-up rewrite of the
 * stored output texts (and of whether each event asks for baseband data, when the sites change),
 * which the same start follows with a rebuild of the kept audit from the records, and the repair of
 * those same kept columns (kept-texts.ts), which writes no column a record's facts are made of.
 */
const ALLOWED = new Set(['migrations.ts', 'output-texts.ts', 'kept-texts.ts'])

t.test('no statement of the SQLite adapter writes a record table but through RecordWrites, which keeps the audit', async (t) => {
  const files = readdirSync(SQLITE_ADAPTER).filter((name) => name.endsWith('.ts'))
  t.ok(files.length > 10, `${files.length} files read`)
  const through = { recordWrites: 0 }
  const straight: string[] = []
  for (const file of files) {
    const text = readFileSync(join(SQLITE_ADAPTER, file), 'utf8')
    // Every SQL text given to db.prepare or db.exec, and every one given to RecordWrites.statement.
    for (const match of text.matchAll(/\.(prepare|exec|statement)(?:<[^>(]*(?:<[^>]*>[^>(]*)*>)?\(\s*(['`])([\s\S]*?)\2/g)) {
      const [, method, , sql] = match
      if (!WRITES_A_RECORD.test(sql!)) continue
      if (method === 'statement') through.recordWrites++
      else if (!ALLOWED.has(file)) straight.push(`${file}: ${sql!.trim().split('\n')[0]}`)
    }
  }
  t.strictSame(straight, [], 'every record write is made through RecordWrites')
  t.ok(through.recordWrites >= 7, `${through.recordWrites} record writes are (events, traces, datatrail, heartbeats, transitions)`)
})

t.test('a record statement refuses to run outside a RecordWrites transaction, and a transaction keeps what its statements did', async (t) => {
  const db = openKeptDatabase(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE heartbeats (heartbeat_id INTEGER PRIMARY KEY, event_no INTEGER NOT NULL)')
  const kept: number[][] = []
  const audits = { keep: (changes: Iterable<readonly [number, unknown]>) => void kept.push([...changes].map(([eventNo]) => eventNo)) } as unknown as SqliteKeptInWrites
  const records = new RecordWrites(db, audits)
  const add = records.statement<[number, number]>('INSERT INTO heartbeats (heartbeat_id, event_no) VALUES (?, ?) ON CONFLICT DO NOTHING', ([, eventNo], { changes }) =>
    changes === 1 ? [eventNo, () => {}] : null
  )
  t.throws(() => add([1, 7], undefined), /only inside RecordWrites.transaction/)
  const addAll = records.transaction((rows: [number, number][]) => rows.forEach((row) => add(row, undefined)))
  addAll([
    [1, 7],
    [2, 8],
    [1, 7]
  ])
  t.strictSame(kept, [[7, 8]], 'the audit of both events is kept, once the writes are made; the heartbeat met again changed nothing')
  const failing = records.transaction(() => {
    add([3, 9], undefined)
    throw new Error('the write fails')
  })
  t.throws(() => failing(), /the write fails/)
  t.strictSame(kept, [[7, 8]], 'a transaction that fails keeps nothing')
  t.equal((db.prepare('SELECT count(*) AS n FROM heartbeats').get() as { n: number }).n, 2, 'and wrote nothing')
})
