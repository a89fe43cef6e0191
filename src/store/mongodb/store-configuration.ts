import type { Db } from 'mongodb'
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
import { Rebuild, type Plan } from '../../kept-audit/rebuild.js'
import { COLLECTIONS } from './indexes.js'
import { takeLease, takeOverLeases } from './instance-leases.js'
import type { MongoKeptDocuments } from './kept-documents.js'

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

type SettingsDocument = Partial<AuditSignature> & { _id: string; configuration?: unknown }

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

function parsed(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : null
  } catch {
    return null
  }
}

/**
 * Settles the store's configuration as `settling.use` says, then rebuilds the kept audit where it
 * was made under other signatures (src/kept-audit/rebuild.ts) before the store serves: every batch
 * here, as the rows are compare-and-sets and the plan is in the settings document (`_id:
 * 'settings'`, the one document of the audit collection that is no event's), which also holds the
 * configuration. A start that only reads, or ignores the configuration, makes nothing. Throws
 * ConfigurationConflictError to refuse.
 */
export async function configureAndRebuild(
  db: Db,
  keeper: Keeper,
  storage: MongoKeptDocuments,
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
  const rebuild = new Rebuild(storage, keeper.config)
  const record = await storage.rebuildRecord()
  if (!rebuild.due(record)) return
  const resumed = rebuild.underWay(record)
  const from = (what: Plan['what']) => (what === 'looks' ? 'kept facts' : 'records')
  if (resumed !== undefined) notify(`The kept audit is being made again from the ${from(resumed.what)}, going on after event ${resumed.after}, where a start before this one stopped.`)
  let step = await rebuild.step()
  while (!step.made) step = await rebuild.step()
  if (step.by !== undefined && !step.by.first) notify(`The kept audit was made again (from the ${from(step.by.what)}): other settings, or a release that audits otherwise.`)
}
