import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { details } from '../../src/domain/audit/details.js'
import { AUDIT_FORMS, factsSignature, lookSignature } from '../../src/domain/audit/signature.js'
import { OUTPUT_FORMS, outputSignature } from '../../src/domain/output-forms.js'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines, type StageDeadlines } from '../../src/domain/stage-deadlines.js'
import { ConfigurationConflictError, LEASE_EXPIRES_MS, type ConfigurationUse, type Instance } from '../../src/store/configuration.js'
import { MongoStore } from '../../src/store/mongodb/store.js'
import type { Store } from '../../src/store/port.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { siteModel, type Sites } from '../../src/vocabulary.js'
import { MingoEngine } from './mingo/engine.js'

/*
 * Issue 27, findings 2 and 3: the kept audit is made under a signature that moves with what this
 * code makes of it (no hand-kept version), and under one configuration per store.
 */

const FOUR = siteModel(['chime', 'kko', 'gbo', 'hco'])
const THREE = siteModel(['chime', 'kko', 'gbo'])
const DEADLINES = parseStageDeadlines(DEFAULT_STAGE_DEADLINES)
const SHORTER = parseStageDeadlines('data_registration=6h')
const T0 = Date.UTC(2026, 2, 1, 12)
const WINDOW = { start: T0 - 1, end: T0 + 10 }

const instance = (id: string): Instance => ({ id, host: 'test-host', pid: 4242 })

interface Opening {
  sites: Sites
  deadlines?: StageDeadlines
  configuration?: ConfigurationUse
  instance?: Instance
  now?: () => number
  notify?: (line: string) => void
}

/** One store's backend, opened as often as a test likes by processes that share it. */
interface Backend {
  name: string
  open(opening: Opening): Promise<Store>
  /** A digest of everything stored, to tell that an open wrote nothing. */
  contents(): Promise<string>
}

function sqliteBackend(t: Test): Backend {
  const path = join(t.testdir(), 'tracer.sqlite')
  return {
    name: 'sqlite',
    open: async ({ sites, deadlines = DEADLINES, ...rest }) => openSqliteStore(path, sites, { deadlines, ...rest }),
    contents: async () => {
      const db = openKeptDatabase(path, { readonly: true })
      try {
        const tables = db.prepare<[], string>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all()
        return digest(tables.map((table) => [table, db.prepare(`SELECT * FROM "${table}"`).raw().all()]))
      } finally {
        db.close()
      }
    }
  }
}

function mongoBackend(): Backend {
  const engine = new MingoEngine()
  return {
    name: 'mongodb',
    open: ({ sites, deadlines = DEADLINES, configuration, instance, now, notify }) =>
      MongoStore.open(engine.db, async () => {}, sites, 'create', {
        deadlines,
        ...(configuration === undefined ? {} : { configuration }),
        ...(instance === undefined ? {} : { instance }),
        ...(now === undefined ? {} : { now }),
        ...(notify === undefined ? {} : { notify })
      }),
    contents: async () => {
      const names = ['users', 'events', 'trace', 'datatrail', 'heartbeats', 'audit', 'instances']
      const all = await Promise.all(names.map(async (name) => [name, await engine.db.collection(name).find({}).toArray()]))
      return digest(all)
    }
  }
}

const digest = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex')

/** An event whose records contradict each other: data_registration complete, its datatrail member not registered. */
async function writeContradiction(store: Store, sites: Sites): Promise<void> {
  const want = Object.fromEntries(sites.basebandKeys.map((key) => [key, true]))
  await store.events.upsert([
    { event_no: 1, timestamp: T0, snr: 12, dm: null, known_source_name: 'GAL', tsar_classification: null, actions: { want, got: {} }, baseband_requested: true, update_timestamp: T0 / 1000 }
  ])
  const trace: Record<string, unknown> = { event_no: 1, 'stages/tsar_classification': 'complete' }
  for (const site of sites.names) {
    for (const stage of ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']) trace[`stages/${stage}/sites/${site}`] = 'complete'
  }
  await store.traces.upsert([trace])
  await store.datatrail.put(sites.names.map((site) => ({ event_no: 1, member: sites.basebandKeyOf(site), value: { registered: false, num_files: 0, missing_files: [] }, update_timestamp: T0 / 1000 })))
}

/** What a window read serves of the store, as text: the fixed audit's record, or the report. */
const served = async (store: Store) =>
  JSON.stringify((await store.audits.windowPage(WINDOW, undefined, 10)).map((entry) => ('json' in entry ? JSON.parse(entry.json) : entry)))

t.test('the signatures move with what the code makes, with no version to raise', async (t) => {
  const facts = factsSignature(FOUR)
  const looks = lookSignature(DEADLINES)
  const texts = outputSignature(FOUR)
  t.equal(factsSignature(FOUR), facts, 'the same code makes the same signature at each start')
  t.not(factsSignature(THREE), facts, 'other sites')
  t.not(lookSignature(SHORTER), looks, 'other deadlines')

  const original = details.registeredNotInDatatrail
  details.registeredNotInDatatrail = (site, member) => `${original(site, member)}, reworded`
  t.teardown(() => void (details.registeredNotInDatatrail = original))
  t.not(lookSignature(DEADLINES), looks, "a finding's wording changed")
  details.registeredNotInDatatrail = original
  t.equal(lookSignature(DEADLINES), looks, 'and back')

  const reordered: typeof AUDIT_FORMS = {
    ...AUDIT_FORMS,
    lookAt: (...args) => {
      const look = AUDIT_FORMS.lookAt(...args)
      return look.audit === null ? look : { ...look, audit: { ...look.audit, findings: [...look.audit.findings].reverse() } }
    }
  }
  t.not(lookSignature(DEADLINES, reordered), looks, 'the findings in another order')
  const reshaped: typeof AUDIT_FORMS = {
    ...AUDIT_FORMS,
    fixedAuditOf: (report, audit) => {
      const fixed = AUDIT_FORMS.fixedAuditOf(report, audit)
      return fixed === null ? null : { ...fixed, json: fixed.json.replace('"event_no"', '"event"') }
    }
  }
  t.not(lookSignature(DEADLINES, reshaped), looks, 'a record of another shape')
  const reduced: typeof AUDIT_FORMS = { ...AUDIT_FORMS, factsOf: (...args) => ({ ...AUDIT_FORMS.factsOf(...args), first_completions: {} }) }
  t.not(factsSignature(FOUR, reduced), facts, 'facts reduced otherwise')
  t.not(outputSignature(FOUR, { ...OUTPUT_FORMS, traceJson: (...args) => OUTPUT_FORMS.traceJson(...args).replace('stages/', 'stage/') }), texts, 'a trace text of another form')
})

for (const make of [sqliteBackend, mongoBackend]) {
  t.test(`${make.name.replace('Backend', '')}: a release that words a finding otherwise serves the new wording for old events at its first start`, async (t) => {
    const backend = make(t)
    const first = await backend.open({ sites: FOUR })
    await writeContradiction(first, FOUR)
    const before = await served(first)
    await first.close()
    t.match(before, /datatrail member baseband is not registered"/, 'the old wording, kept')

    const original = details.registeredNotInDatatrail
    details.registeredNotInDatatrail = (site, member) => `the trace says ${site} registered it, ${member} says not`
    t.teardown(() => void (details.registeredNotInDatatrail = original))
    const notes: string[] = []
    const next = await backend.open({ sites: FOUR, notify: (line) => notes.push(line) })
    const after = await served(next)
    await next.close()
    t.match(after, /the trace says chime registered it, baseband says not/, 'the kept audit was made again with the new wording')
    t.notMatch(after, /is not registered/)
    t.equal(notes.filter((line) => /kept audit was made again/.test(line)).length, 1, 'said once')
  })

  t.test(`${make.name.replace('Backend', '')}: an instance with other sites or deadlines than a live one does not start`, async (t) => {
    const backend = make(t)
    let clock = T0
    const now = () => clock
    const live = await backend.open({ sites: FOUR, configuration: 'adopt', instance: instance('a'), now })
    t.teardown(() => live.close())
    await writeContradiction(live, FOUR)
    const contents = await backend.contents()

    const sites = backend.open({ sites: THREE, configuration: 'adopt', instance: instance('b'), now })
    await t.rejects(sites, ConfigurationConflictError)
    await t.rejects(sites, {
      message: /^TRACER_SITES is chime,kko,gbo here but chime,kko,gbo,hco on a live instance of this store \(pid 4242 on test-host\); to change it, stop every instance/
    })
    const deadlines = backend.open({ sites: FOUR, deadlines: SHORTER, configuration: 'adopt', instance: instance('c'), now })
    await t.rejects(deadlines, {
      message: /^STAGE_DEADLINES is tsar_classification=1h,baseband_callback_request=15m,baseband_conversion=6h,data_registration=6h,data_replication_to_minoc=2d here but .*data_registration=12h.* on a live instance/
    })
    t.equal(await backend.contents(), contents, 'the refused starts changed nothing')
    t.match(await served(live), /"sites":\["chime","kko","gbo","hco"\]/, 'the live instance serves its four sites')

    const same = await backend.open({ sites: FOUR, configuration: 'adopt', instance: instance('d'), now })
    await same.close()
    t.pass('an instance with the same configuration starts beside it')

    clock += LEASE_EXPIRES_MS + 1
    const lapsed = backend.open({ sites: THREE, configuration: 'adopt', instance: instance('e'), now })
    await t.rejects(lapsed, {
      message: /^TRACER_SITES is chime,kko,gbo here but chime,kko,gbo,hco on an instance of this store that stopped without removing its lease \(pid 4242 on test-host, last renewed 2026-03-01T12:00:00\.000Z\); if it is gone for good, take the store over with `tracer take-over`, then start again/
    }, 'a lease not renewed in time is no leave to take the store over')
    t.equal(await backend.contents(), contents, 'and the refused start changed nothing')
    const notes: string[] = []
    const takeOver = await backend.open({ sites: THREE, configuration: 'take-over', now, notify: (line) => notes.push(line) })
    await takeOver.close()
    t.match(notes, [/^Removed 1 lapsed lease \(pid 4242 on test-host, last renewed 2026-03-01T12:00:00\.000Z, TRACER_SITES chime,kko,gbo,hco\)/], 'the operator takes it over')
    const after = await backend.open({ sites: THREE, configuration: 'adopt', instance: instance('e'), now })
    t.match(await served(after), /"sites":\["chime","kko","gbo"\]/, 'then the next start records its own configuration')
    await after.close()
  })

  t.test(`${make.name.replace('Backend', '')}: a lease whose holder runs on this host stays live however long its renewal is held up, and take-over leaves it`, async (t) => {
    const backend = make(t)
    let clock = T0
    const now = () => clock
    // This test's own process is a holder that runs: as an instance another program's lock keeps from renewing.
    const held = await backend.open({ sites: FOUR, configuration: 'adopt', instance: { id: 'held', host: hostname(), pid: process.pid }, now })
    t.teardown(() => held.close())
    await writeContradiction(held, FOUR)
    clock += 10 * LEASE_EXPIRES_MS
    await t.rejects(backend.open({ sites: THREE, configuration: 'adopt', instance: instance('other'), now }), {
      message: new RegExp(`^TRACER_SITES is chime,kko,gbo here but chime,kko,gbo,hco on a live instance of this store \\(pid ${process.pid} on `)
    })
    const notes: string[] = []
    const takeOver = await backend.open({ sites: THREE, configuration: 'take-over', now, notify: (line) => notes.push(line) })
    await takeOver.close()
    t.match(notes, [/^No lapsed lease: there was nothing to take over\. 1 live instance still holds a lease/])
    await t.rejects(backend.open({ sites: THREE, configuration: 'adopt', instance: instance('other'), now }), { message: /on a live instance of this store/ }, 'still refused')
    t.match(await served(held), /"sites":\["chime","kko","gbo","hco"\]/, 'the held instance keeps the store')
  })

  t.test(`${make.name.replace('Backend', '')}: a command never changes the configuration; one that reads with another is refused`, async (t) => {
    const backend = make(t)
    const server = await backend.open({ sites: FOUR, configuration: 'adopt' })
    await writeContradiction(server, FOUR)
    await server.close()
    const contents = await backend.contents()

    await t.rejects(backend.open({ sites: THREE, configuration: 'read' }), {
      message: /^TRACER_SITES is chime,kko,gbo here but chime,kko,gbo,hco in the store; a command uses the configuration the store was made with/
    })
    await t.rejects(backend.open({ sites: FOUR, deadlines: SHORTER, configuration: 'write' }), { message: /^STAGE_DEADLINES is .* in the store/ })
    const users = await backend.open({ sites: siteModel(['chime', 'kko']), configuration: 'ignore' })
    t.strictSame(await users.users.list(), [])
    await users.close()
    const reader = await backend.open({ sites: FOUR, deadlines: SHORTER, configuration: 'read' })
    t.match(await served(reader), /registered-not-in-datatrail/)
    await reader.close()
    t.equal(await backend.contents(), contents, 'nothing was written by opening')
  })

  t.test(`${make.name.replace('Backend', '')}: a deliberate change (every instance stopped, one started with the new setting) makes the kept state again once`, async (t) => {
    const backend = make(t)
    const old = await backend.open({ sites: FOUR, configuration: 'adopt', instance: instance('old') })
    await writeContradiction(old, FOUR)
    await old.close()

    const notes: string[] = []
    const changed = await backend.open({ sites: THREE, configuration: 'adopt', instance: instance('new'), notify: (line) => notes.push(line) })
    const after = await served(changed)
    await changed.close()
    t.match(notes, [/^The store's configuration changed \(TRACER_SITES chime,kko,gbo,hco -> chime,kko,gbo\)/])
    t.equal(notes.filter((line) => /kept audit was made again \(from the records\)/.test(line)).length, 1, 'made again from the records')
    t.notMatch(after, /hco/, 'nothing served names the site it no longer has')

    const again: string[] = []
    const restarted = await backend.open({ sites: THREE, configuration: 'adopt', instance: instance('new'), notify: (line) => again.push(line) })
    await restarted.close()
    t.strictSame(again, [], 'the next start has nothing to make again')
    await t.rejects(backend.open({ sites: FOUR, configuration: 'read' }), { message: /^TRACER_SITES is chime,kko,gbo,hco here but chime,kko,gbo in the store/ })
  })
}
