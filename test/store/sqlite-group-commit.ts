import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { GroupCommit } from '../../src/store/sqlite/group-commit.js'

/** A file with one table, and every statement the connection runs, in order. */
function open(t: Test) {
  const statements: string[] = []
  const path = join(t.testdir(), 'group.sqlite')
  const db = openKeptDatabase(path, { verbose: (sql) => statements.push(String(sql)) })
  t.teardown(() => db.close())
  db.pragma('journal_mode = WAL')
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL CHECK (text <> \'refused\'))')
  const insert = db.prepare<[number, string]>('INSERT INTO notes (id, text) VALUES (?, ?)')
  const rows = () => db.prepare<[], { id: number; text: string }>('SELECT id, text FROM notes ORDER BY id').all()
  const begins = () => statements.filter((sql) => sql === 'BEGIN IMMEDIATE').length
  return { path, db, insert, rows, begins, statements }
}

t.test('writes submitted in one turn are committed by one transaction, in the order submitted', async (t) => {
  const { db, insert, rows, begins } = open(t)
  const order: number[] = []
  const writes = new GroupCommit(db, (id: number, text: string) => {
    order.push(id)
    insert.run(id, text)
    return id * 10
  })
  const values = await Promise.all([writes.submit(3, 'c'), writes.submit(1, 'a'), writes.submit(2, 'b')])
  t.same(values, [30, 10, 20])
  t.same(order, [3, 1, 2])
  t.equal(begins(), 1, 'one transaction')
  t.same(rows(), [{ id: 1, text: 'a' }, { id: 2, text: 'b' }, { id: 3, text: 'c' }])
  await writes.submit(4, 'd')
  t.equal(begins(), 2, 'a write of a later turn has a transaction of its own')
})

t.test('a write that fails is undone alone: the others of its transaction commit', async (t) => {
  const { db, insert, rows } = open(t)
  const writes = new GroupCommit(db, (id: number, text: string) => insert.run(id, text).changes)
  const outcomes = await Promise.allSettled([writes.submit(1, 'a'), writes.submit(2, 'refused'), writes.submit(3, 'c')])
  t.same(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'rejected', 'fulfilled']
  )
  t.match((outcomes[1] as PromiseRejectedResult).reason, { code: 'SQLITE_CONSTRAINT_CHECK' })
  t.same(rows(), [{ id: 1, text: 'a' }, { id: 3, text: 'c' }])
})

t.test('an error that ends the whole transaction fails every write in it, and none is applied', async (t) => {
  const { db, insert, rows } = open(t)
  const writes = new GroupCommit(db, (id: number, text: string) => {
    insert.run(id, text)
    // What SQLite does by itself after a full disk or an I/O error: the transaction is gone.
    if (text === 'ends it') db.exec('ROLLBACK')
    if (!db.inTransaction) throw new Error('the transaction was rolled back')
    return id
  })
  const outcomes = await Promise.allSettled([writes.submit(1, 'a'), writes.submit(2, 'ends it'), writes.submit(3, 'c')])
  t.same(
    outcomes.map((outcome) => outcome.status),
    ['rejected', 'rejected', 'rejected']
  )
  t.same(rows(), [])
  t.equal(await writes.submit(4, 'd'), 4, 'the next turn writes again')
})

t.test('when the file is locked by another writer, every write of the transaction rejects', async (t) => {
  const { path, db, insert, rows, begins } = open(t)
  db.pragma('busy_timeout = 0')
  const other = openKeptDatabase(path)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  const writes = new GroupCommit(db, (id: number, text: string) => insert.run(id, text).changes)
  const outcomes = await Promise.allSettled([writes.submit(1, 'a'), writes.submit(2, 'b')])
  t.same(
    outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as { code?: string }).code : outcome.status)),
    ['SQLITE_BUSY', 'SQLITE_BUSY']
  )
  t.equal(begins(), 1, 'tried once: a transaction that could not begin is not a write that failed')
  other.exec('ROLLBACK')
  t.same(rows(), [])
})

t.test('a batch whose writes all succeed runs each once, with no savepoint', async (t) => {
  const { db, insert, rows, statements } = open(t)
  const runs: number[] = []
  const writes = new GroupCommit(db, (id: number, text: string) => (runs.push(id), insert.run(id, text).changes))
  await Promise.all([writes.submit(1, 'a'), writes.submit(2, 'b'), writes.submit(3, 'c')])
  t.same(runs, [1, 2, 3])
  t.same(statements.filter((sql) => /SAVEPOINT/i.test(sql)), [], 'no savepoint')
  t.same(rows().length, 3)
})

t.test('a batch with a write that fails is undone, then run again with a savepoint for each write', async (t) => {
  const { db, insert, rows, statements } = open(t)
  const runs: number[] = []
  const writes = new GroupCommit(db, (id: number, text: string) => (runs.push(id), insert.run(id, text).changes))
  const outcomes = await Promise.allSettled([writes.submit(1, 'a'), writes.submit(2, 'refused'), writes.submit(3, 'c')])
  t.same(runs, [1, 2, 1, 2, 3], 'the first pass stops at the failing write; the second runs every write')
  t.equal(statements.filter((sql) => /^SAVEPOINT/i.test(sql)).length, 3, 'one savepoint a write in the second pass')
  t.same(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'rejected', 'fulfilled']
  )
  t.same(rows(), [{ id: 1, text: 'a' }, { id: 3, text: 'c' }], 'nothing of the first pass is left')
})
