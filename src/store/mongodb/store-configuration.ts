import type { Collection, Db } from 'mongodb'
import { factsSignature, lookSignature } from '../../domain/audit/signature.js'
import type { Maybe } from '../../maybe.js'
import {
  asRecorded,
  readConfiguration,
  type ConfigurationOptions,
  type ConfigurationStorage,
  type Instance,
  type LeaseRecord,
  type StoreConfiguration,
  type StoredConfiguration
} from '../configuration.js'
import { resolveConfiguration } from '../configuration-use.js'
import type { Keeper, KeeperConfig } from '../../kept-audit/keeper.js'
import { Rebuild, type Plan } from '../../kept-audit/rebuild.js'
import { numberIn } from './documents.js'
import { COLLECTIONS } from './indexes.js'
import { AUDIT_SETTINGS_ID, type MongoKeptDocuments } from './kept-documents.js'

/** What the kept audits were made with, as the settings document holds it: the signatures of the facts (the sites) and of the looks (the deadlines). */
export const signatureOf = ({ sites, deadlines }: Pick<KeeperConfig, 'sites' | 'deadlines'>) => ({
  facts_signature: factsSignature(sites),
  looks_signature: lookSignature(deadlines)
})

type SettingsDocument = { _id: string; facts_signature?: string; looks_signature?: string; configuration?: unknown }

/** The serving instances' leases, one document each; `renewed_at` is the instance's own clock: a store's hosts are expected to agree within seconds. */
const INSTANCES_COLLECTION = 'instances'

type LeaseDocument = { _id: string; host: string; pid: number; configuration: StoreConfiguration; renewed_at: number }

/** The store's configuration, in the settings document of the audit collection, and its leases, in the collection `instances`. */
export class MongoConfiguration implements ConfigurationStorage {
  private readonly settings: Collection<SettingsDocument>
  private readonly instances: Collection<LeaseDocument>

  constructor(db: Db) {
    this.settings = db.collection<SettingsDocument>(COLLECTIONS.audit)
    this.instances = db.collection<LeaseDocument>(INSTANCES_COLLECTION)
  }

  async stored(): Promise<StoredConfiguration> {
    const stored = await this.settings.findOne({ _id: AUDIT_SETTINGS_ID })
    return stored === null ? {} : { configuration: stored.configuration, facts: stored.facts_signature, looks: stored.looks_signature }
  }

  async record(configuration: StoreConfiguration): Promise<void> {
    await this.settings.updateOne({ _id: AUDIT_SETTINGS_ID }, { $set: { configuration: asRecorded(configuration) } }, { upsert: true })
  }

  async leases(): Promise<LeaseRecord[]> {
    return (await this.instances.find({}).toArray()).map((lease) => ({
      instance: { id: lease._id, host: String(lease.host), pid: numberIn(lease.pid, 0) },
      configuration: readConfiguration(lease.configuration),
      renewedAt: numberIn(lease.renewed_at, 0)
    }))
  }

  async putLease({ id, host, pid }: Instance, configuration: StoreConfiguration, renewedAt: number): Promise<void> {
    await this.instances.updateOne({ _id: id }, { $set: { host, pid, configuration: asRecorded(configuration), renewed_at: renewedAt } }, { upsert: true })
  }

  async removeLease(id: string, renewedAt?: number): Promise<void> {
    await this.instances.deleteOne(renewedAt === undefined ? { _id: id } : { _id: id, renewed_at: renewedAt })
  }

  /** No transaction: each write is one document's, and a start writes its lease before it reads the others' (takeLease, configuration-use.ts). */
  atomically = <T>(work: () => Maybe<T>): Maybe<T> => work()
}

/**
 * Resolves the store's configuration (configuration-use.ts, as SQLite does), then rebuilds the kept audit made under
 * other signatures (src/kept-audit/rebuild.ts), every batch before the store serves. A start that only reads or
 * ignores the configuration makes nothing; ConfigurationConflictError refuses.
 */
export async function configureAndRebuild(
  db: Db,
  keeper: Keeper,
  storage: MongoKeptDocuments,
  { configuration: use = 'adopt', instance, notify = () => {} }: ConfigurationOptions = {}
): Promise<void> {
  const wanted: StoreConfiguration = { sites: keeper.config.sites.names, deadlines: keeper.config.deadlines }
  const { refresh, changed } = await resolveConfiguration(new MongoConfiguration(db), wanted, use, { instance, now: keeper.config.clock() })
  if (changed !== undefined) notify(changed)
  if (!refresh) return
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
