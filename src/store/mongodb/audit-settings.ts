import type { Collection, Db } from 'mongodb'
import { factsSignature } from '../../domain/audit/kept-facts.js'
import { lookSignature } from '../../domain/audit/kept-look.js'
import { AUDIT_SETTINGS_ID } from './audit-documents.js'
import type { AuditConfig, AuditKeeper } from './audit-keeper.js'
import type { AuditRecords } from './audit-records.js'
import type { MongoAudits } from './audits.js'
import { numberIn } from './documents.js'
import { COLLECTIONS } from './indexes.js'

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

export const signatureOf = ({ sites, deadlines }: Pick<AuditConfig, 'sites' | 'deadlines'>): AuditSignature => ({
  facts_signature: factsSignature(sites),
  looks_signature: lookSignature(deadlines)
})

/**
 * Makes every kept audit agree with this instance's configuration before it serves. The settings
 * document (`_id: 'settings'` in the audit collection, the one document that is no event's) holds
 * the signatures the kept audits were made with (factsSignature, lookSignature). When the facts'
 * signature differs (other sites, or a new form of the facts), or there is no such document (the
 * first start on this database, maybe with years of data), every event's facts are made again
 * from its records; when only the deadlines differ, every look is made again from the kept facts. The signature is stored once that is done, so a start that is
 * stopped half way does it again. Each event is written as a write would (compare-and-set, with its
 * verdict change), so instances starting together do no harm to each other.
 */
export async function reconcileAudits(db: Db, keeper: AuditKeeper, records: AuditRecords, audits: MongoAudits): Promise<void> {
  const settings = db.collection<Partial<AuditSignature> & { _id: string }>(COLLECTIONS.audit)
  const wanted = signatureOf(keeper.config)
  const stored = await settings.findOne({ _id: AUDIT_SETTINGS_ID }, { projection: { _id: 0, facts_signature: 1, looks_signature: 1 } })
  if (stored?.facts_signature === wanted.facts_signature && stored.looks_signature === wanted.looks_signature) return
  if (stored?.facts_signature === wanted.facts_signature) await relookAll(db.collection(COLLECTIONS.audit), audits, keeper.config.clock)
  else await rebuildAll(keeper, records)
  await settings.updateOne({ _id: AUDIT_SETTINGS_ID }, { $set: wanted }, { upsert: true })
}

/** Every event with a record or an audit document: its facts and look made again from its records. */
async function rebuildAll(keeper: AuditKeeper, records: AuditRecords): Promise<void> {
  let after = Number.NEGATIVE_INFINITY
  for (;;) {
    const eventNos = await records.eventNumbersAfter(after, REBUILD_PAGE)
    if (eventNos.length > 0) await keeper.keep(eventNos)
    if (eventNos.length < REBUILD_PAGE) return
    after = eventNos.at(-1)!
  }
}

/** Every audit document looked at again with the deadlines now configured, from its kept facts. */
async function relookAll(collection: Collection, audits: MongoAudits, clock: () => number): Promise<void> {
  let after = Number.NEGATIVE_INFINITY
  for (;;) {
    const documents = await collection
      .find({ event_no: { $gt: after } }, { projection: { _id: 0, event_no: 1 }, sort: { event_no: 1 }, limit: REBUILD_PAGE })
      .toArray()
    const eventNos = documents.map((document) => numberIn(document.event_no, Number.NaN)).filter((eventNo) => !Number.isNaN(eventNo))
    if (eventNos.length > 0) await audits.settle(eventNos, clock())
    if (documents.length < REBUILD_PAGE) return
    after = numberIn(documents.at(-1)!.event_no, Number.NaN)
    if (Number.isNaN(after)) return
  }
}
