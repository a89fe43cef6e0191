import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { loadConfig } from '../src/config.js'
import { openKeptDatabase } from '../src/store/sqlite/native-lifetimes.js'
import { rebuildOutputTexts } from '../src/store/sqlite/output-texts.js'
import { openSqliteStore, type SqliteOptions } from '../src/store/sqlite/store.js'
import { siteModel } from '../src/vocabulary.js'

/**
 * `node dist/bench/start-work.js STORE.sqlite [rounds]`: what a start does on a large store before
 * it listens, and what it leaves for later (issue 40, finding 6), each on a fresh copy of STORE
 * (a store of this release, e.g. `TRACER_DB=... node dist/src/cli.js seed --demo --events 100000
 * --days 365`), which is never written:
 *
 * - the migration steps whose work grows with the store, as an upgrade from a store written before
 *   each runs them: what each made is dropped on the copy, then made again as migrations.ts makes
 *   it, timed (one IMMEDIATE transaction each, as the migration's);
 * - a start whose sites differ from the store's (its last site left out): the time until a serving
 *   store is handed over (`while-serving`: the first batch of the output texts; the rest, and the
 *   kept audit, run between requests), beside the output texts made whole for those sites, which
 *   every start did before it listened until issue 40.
 *
 * Milliseconds of wall time on a machine otherwise idle; run it on one before relying on a figure.
 */

/** Each step: what undoes it on a store of this release, and the SQL of its migration that makes it again. */
const MIGRATION_STEPS: { name: string; undo: string; redo: string }[] = [
  {
    name: 'migration 9: heartbeats_finished and heartbeats_erring (every heartbeat, its JSON read)',
    undo: 'DROP INDEX heartbeats_finished; DROP INDEX heartbeats_erring',
    redo: `CREATE INDEX heartbeats_finished ON heartbeats (event_no, finished_site, heartbeat_id) WHERE finished_site IS NOT NULL;
           CREATE INDEX heartbeats_erring ON heartbeats (event_no, erring_site, heartbeat_id) WHERE erring_site IS NOT NULL;`
  },
  {
    // Dropped again by migration 13: an upgrade from before 9 builds it, then drops it.
    name: 'migration 9: transitions_completions (every transition)',
    undo: '',
    redo: `CREATE INDEX transitions_completions ON transitions (event_no, key, at) WHERE "to" = 'complete'`
  },
  {
    name: 'migration 10: audits_by_look_time (every kept row)',
    undo: 'DROP INDEX audits_by_look_time',
    redo: 'CREATE INDEX audits_by_look_time ON audits (looked_at) WHERE looked_at IS NOT NULL'
  },
  {
    name: 'migration 11: record_counts filled (every heartbeat, counted by event)',
    undo: 'DELETE FROM record_counts',
    redo: `INSERT INTO record_counts (event_no, heartbeat_count)
             SELECT event_no, n FROM (SELECT event_no, COUNT(*) AS n FROM heartbeats GROUP BY event_no) WHERE true`
  },
  {
    name: 'migration 13: transitions_first_completions (every transition)',
    undo: 'DROP INDEX transitions_first_completions',
    redo: 'CREATE INDEX transitions_first_completions ON transitions (event_no, completion, at) WHERE completion IS NOT NULL'
  }
]

const ms = (from: number) => Math.round(performance.now() - from)

/** `measure` of a fresh copy of `store`, removed after (a copy of a large store is large). */
async function onCopy<T>(store: string, folder: string, measure: (copy: string) => T | Promise<T>): Promise<T> {
  const copy = join(folder, 'copy.sqlite')
  const source = openKeptDatabase(store, { readonly: true })
  try {
    source.exec(`VACUUM INTO '${copy.replaceAll("'", "''")}'`)
  } finally {
    source.close()
  }
  try {
    return await measure(copy)
  } finally {
    for (const file of [copy, `${copy}-wal`, `${copy}-shm`]) rmSync(file, { force: true })
  }
}

const fewerSites = () => {
  const sites = loadConfig({}).TRACER_SITES
  return siteModel(sites.names.slice(0, -1))
}

function counts(store: string): string {
  const db = openKeptDatabase(store, { readonly: true })
  try {
    const count = (table: string) => (db.prepare<[], number>(`SELECT count(*) FROM ${table}`).pluck().get() ?? 0).toLocaleString('en-US')
    return `${count('events')} events, ${count('traces')} traces, ${count('heartbeats')} heartbeats, ${count('transitions')} transitions, ${count('audits')} kept audit rows`
  } finally {
    db.close()
  }
}

function migrationStep(copy: string, step: (typeof MIGRATION_STEPS)[number]): number {
  const db = openKeptDatabase(copy)
  try {
    if (step.undo !== '') db.exec(step.undo)
    const started = performance.now()
    db.transaction(() => db.exec(step.redo)).immediate()
    return ms(started)
  } finally {
    db.close()
  }
}

async function handedOver(copy: string, options: SqliteOptions): Promise<number> {
  const started = performance.now()
  // Paced by nothing: the batches a serving store would run between requests never run here.
  const store = openSqliteStore(copy, fewerSites(), { ...options, rebuildPace: () => {} })
  const took = ms(started)
  await store.close()
  return took
}

function textsMadeWhole(copy: string): number {
  const db = openKeptDatabase(copy)
  try {
    const started = performance.now()
    rebuildOutputTexts(db, fewerSites())
    return ms(started)
  } finally {
    db.close()
  }
}

async function main() {
  const [store, roundsText = '3'] = process.argv.slice(2)
  if (store === undefined) throw new Error('usage: node dist/bench/start-work.js STORE.sqlite [rounds]')
  const rounds = Number(roundsText)
  const folder = mkdtempSync(join(tmpdir(), 'start-work-'))
  try {
    process.stdout.write(`${resolve(store)}: ${counts(store)}\n`)
    for (const step of MIGRATION_STEPS) {
      const times: number[] = []
      for (let round = 0; round < rounds; round++) times.push(await onCopy(store, folder, (copy) => migrationStep(copy, step)))
      process.stdout.write(`${step.name}: ${times.join(', ')} ms\n`)
    }
    const whole: number[] = []
    for (let round = 0; round < rounds; round++) whole.push(await onCopy(store, folder, textsMadeWhole))
    process.stdout.write(`the output texts made whole for one site fewer (before issue 40, all before listening): ${whole.join(', ')} ms\n`)
    const serving: number[] = []
    for (let round = 0; round < rounds; round++) serving.push(await onCopy(store, folder, (copy) => handedOver(copy, { rebuild: 'while-serving' })))
    process.stdout.write(`a start with one site fewer, while-serving: handed over after ${serving.join(', ')} ms\n`)
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

await main()
