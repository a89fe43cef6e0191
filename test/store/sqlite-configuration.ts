import t from 'tap'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import { InstanceLease } from '../../src/store/configuration-use.js'
import { openDatabase } from '../../src/store/sqlite/database.js'
import { SqliteConfiguration } from '../../src/store/sqlite/store-configuration.js'

/*
 * A connection keeps every statement prepared on it for the process's life (native-lifetimes.ts),
 * and a serving instance renews its lease on a connection of its own for as long as it serves: a
 * renewal that prepared its statements again would grow the process with every one.
 */

t.test('a lease renews on its connection with the statements it prepared once', async (t) => {
  const db = openDatabase(':memory:', 0)
  t.teardown(() => db.close())
  let prepared = 0
  const prepare = db.prepare.bind(db)
  db.prepare = (source: string) => (prepared++, prepare(source))
  const configuration = { sites: ['chime', 'kko'], deadlines: parseStageDeadlines(DEFAULT_STAGE_DEADLINES) }
  const lost: unknown[] = []
  const lease = new InstanceLease(new SqliteConfiguration(db), { id: 'a', host: 'test-host', pid: 4242 }, configuration, () => 1000, (error) => lost.push(error))
  t.teardown(() => lease.stop())

  // SQLite answers at once: each renewal is over when renew returns.
  void lease.renew()
  const first = prepared
  t.ok(first > 0, `the first renewal prepared ${first}`)
  for (let renewal = 0; renewal < 100; renewal++) void lease.renew()
  t.equal(prepared, first, 'a hundred renewals more prepared none')
  t.equal(db.prepare<[], number>('SELECT renewed_at FROM instances').pluck().get(), 1000, 'and the lease was renewed')
  t.strictSame(lost, [])
})
