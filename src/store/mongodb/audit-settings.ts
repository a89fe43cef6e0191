import type { Collection, Db } from 'mongodb'
import { factsSignature, lookSignature } from '../../domain/audit/signature.js'
import {
  adoptedLine,
  conflictOf,
  readConfiguration,
  sameConfiguration,
  type ConfigurationUse,
  type Instance,
  type StoreConfiguration
} from '../configuration.js'
import { AUDIT_SETTINGS_ID } from './audit-documents.js'
import type { Keeper, KeeperConfig } from '../../kept-audit/keeper.js'
import type { AuditRecords } from './audit-records.js'
import { numberIn } from './documents.js'
import { COLLECTIONS } from './indexes.js'
import { takeLease, takeOverLeases } from './instance-leases.js'

/** Events brought up to date at a time while the kept audit is rebuilt. */
const REBUILD_PAGE = 500

/**
 * What the kept audits were made with, as stored in the settings document: the signature of the
 * facts (the sites, and the form of the facts), and that of the looks (the deadlines).
 */
export interface AuditSignature {
  facts_signature: string
  looks_signature: string
}

export const signatureOf = ({ sites, deadlines }: Pick<KeeperConfig, 'sites' | 'deadlines'>): AuditSignature => ({
  facts_signature: factsSignature(sites),
  looks_signature: lookSignature(deadlines)
})

/** How a start treats the store's configuration (store/configuration.ts), and whom it tells. */
export interface ConfigurationSettling {
  use: ConfigurationUse
  /** A serving instance, whose lease is taken before the check. */
  instance?: Instance
  notify: (line: string) => void
}

/**
 * A rebuild under way: the signatures it makes the audit under, whether from the records or from
 * the kept facts, and the last event number done. Written after each page; a start stopped half
 * way leaves it, and the next start under the same signatures goes on after that event.
 */
interface RebuildMark extends AuditSignature {
  from: 'records' | 'facts'
  after: number
}

type SettingsDocument = Partial<AuditSignature> & { _id: string; configuration?: unknown; rebuild?: RebuildMark | null }

const settingsOf = (db: Db) => db.collection<SettingsDocument>(COLLECTIONS.audit)

/**
 * The configuration the store records: the settings document's `configuration`, or on a store an
 * earlier release kept the audit of, what its signatures say. Null when neither.
 */
export async function recordedConfiguration(db: Db): Promise<StoreConfiguration | null> {
  const stored = await settingsOf(db).findOne({ _id: AUDIT_SETTINGS_ID })
  if (stored === null) return null
  if (stored.configuration !== undefined) return readConfiguration(stored.configuration)
  const facts = parsed(stored.facts_signature) as { sites?: unknown } | null
  const looks = parsed(stored.looks_signature) as { deadlines?: unknown } | null
  if (facts === null || looks === null) return null
  return readConfiguration({ sites: facts.sites, deadlines: looks.deadlines ?? looks })
}

/** The digest of the audit's rules and forms in a looks signature (signature.ts), apart from the deadlines. */
const lookForms = (signature: string | undefined) => (parsed(signature) as { looks?: unknown } | null)?.looks

function parsed(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : null
  } catch {
    return null
  }
}

/**
 * Settles the store's configuration as `settling.use` says, then makes every kept audit agree with
 * this instance's configuration and release before it serves (a start that only reads, or ignores
 * the configuration, makes nothing). The settings document (`_id: 'settings'` in the audit
 * collection, the one document that is no event's) holds the configuration and the signatures
 * the kept audits were made under (signature.ts). When the facts' signature differs (other sites,
 * or a release that reduces records otherwise), or there is no such document (the first start on
 * this database, maybe with years of data), every event's facts are made again from its records;
 * when only the looks' differs (deadlines, or the rules and forms of the audit), every look is made
 * again from the kept facts, a page at a time in order of event number, each page's last event
 * recorded once it is done: a start stopped half way leaves that mark, and the next start under
 * the same signatures goes on after it. The signature is stored once all is done. Each event is written as a write would (compare-and-set, with its verdict
 * change), so instances starting together do no harm to each other. Throws
 * ConfigurationConflictError to refuse.
 */
export async function reconcileAudits(
  db: Db,
  keeper: Keeper,
  records: AuditRecords,
  settling: ConfigurationSettling = { use: 'adopt', notify: () => {} }
): Promise<void> {
  const { use, instance, notify } = settling
  if (use === 'ignore') return
  if (use === 'take-over') return notify(await takeOverLeases(db, keeper.config.clock()))
  const wanted: StoreConfiguration = { sites: keeper.config.sites.names, deadlines: keeper.config.deadlines }
  if (use === 'adopt' && instance !== undefined) await takeLease(db, instance, wanted, keeper.config.clock())
  const recorded = await recordedConfiguration(db)
  if (use !== 'adopt') {
    const conflict = recorded === null ? undefined : conflictOf(wanted, recorded, 'store', use === 'read' ? 'sites' : 'both')
    if (conflict !== undefined) throw conflict
    if (use === 'read') return
  }
  if (recorded === null || !sameConfiguration(wanted, recorded)) {
    await settingsOf(db).updateOne(
      { _id: AUDIT_SETTINGS_ID },
      { $set: { configuration: { sites: [...wanted.sites], deadlines: { ...wanted.deadlines } } } },
      { upsert: true }
    )
    if (recorded !== null) notify(adoptedLine(recorded, wanted))
  }
  const signatures = signatureOf(keeper.config)
  const stored = await settingsOf(db).findOne(
    { _id: AUDIT_SETTINGS_ID },
    { projection: { _id: 0, facts_signature: 1, looks_signature: 1, rebuild: 1 } }
  )
  const left = stored?.rebuild ?? undefined
  const agrees = stored?.facts_signature === signatures.facts_signature && stored.looks_signature === signatures.looks_signature
  if (agrees && left === undefined) return
  const resumed = left?.facts_signature === signatures.facts_signature && left.looks_signature === signatures.looks_signature ? left : undefined
  // Only the deadlines changed: the kept reports hold, and only the looks are made again. Otherwise
  // (other sites, a release that reduces or audits otherwise, or a rebuild from the records left
  // unfinished under other settings) every document is held against its records.
  const onlyDeadlines =
    resumed !== undefined
      ? resumed.from === 'facts'
      : stored?.facts_signature === signatures.facts_signature &&
        lookForms(stored.looks_signature) === lookForms(signatures.looks_signature) &&
        left?.from !== 'records'
  const from = onlyDeadlines ? 'facts' : 'records'
  const mark = (after: number) => settingsOf(db).updateOne({ _id: AUDIT_SETTINGS_ID }, { $set: { rebuild: { ...signatures, from, after } } }, { upsert: true })
  const start = resumed?.after ?? Number.NEGATIVE_INFINITY
  if (resumed !== undefined) notify(`The kept audit is being made again from the ${from === 'facts' ? 'kept facts' : 'records'}, going on after event ${resumed.after}, where a start before this one stopped.`)
  if (onlyDeadlines) await relookAll(db.collection(COLLECTIONS.audit), keeper, start, mark)
  else await rebuildAll(keeper, records, start, mark)
  await settingsOf(db).updateOne({ _id: AUDIT_SETTINGS_ID }, { $set: { ...signatures, rebuild: null } }, { upsert: true })
  if (stored !== null) notify(`The kept audit was made again (from the ${from === 'facts' ? 'kept facts' : 'records'}): other settings, or a release that audits otherwise.`)
}

/** Every event with a record or an audit document: its facts and look made again from its records. */
async function rebuildAll(keeper: Keeper, records: AuditRecords, start: number, mark: (after: number) => Promise<unknown>): Promise<void> {
  let after = start
  for (;;) {
    const eventNos = await records.eventNumbersAfter(after, REBUILD_PAGE)
    if (eventNos.length > 0) await keeper.keep(eventNos)
    if (eventNos.length < REBUILD_PAGE) return
    after = eventNos.at(-1)!
    await mark(after)
  }
}

/** Every audit document looked at again with the deadlines now configured, from its kept facts. */
async function relookAll(collection: Collection, keeper: Keeper, start: number, mark: (after: number) => Promise<unknown>): Promise<void> {
  let after = start
  for (;;) {
    const documents = await collection
      .find({ event_no: { $gt: after } }, { projection: { _id: 0, event_no: 1 }, sort: { event_no: 1 }, limit: REBUILD_PAGE })
      .toArray()
    const eventNos = documents.map((document) => numberIn(document.event_no, Number.NaN)).filter((eventNo) => !Number.isNaN(eventNo))
    if (eventNos.length > 0) await keeper.settle(eventNos, keeper.config.clock())
    if (documents.length < REBUILD_PAGE) return
    after = numberIn(documents.at(-1)!.event_no, Number.NaN)
    if (Number.isNaN(after)) return
    await mark(after)
  }
}
