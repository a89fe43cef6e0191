import type { AuditFinding } from '../../../schemas/audit.js'
import { CLASSIFICATION_STAGE } from '../../vocabulary.js'
import { details } from './details.js'
import { finding } from './findings.js'
import type { EventFacts } from './site-facts.js'

/**
 * `classified-not-in-trace`: the event record holds a classification while the trace says the
 * classification is incomplete, so the classifier ran and its trace update was lost. Whatever the
 * clock: a `stuck` finding on the same stage may stand beside it once its deadline passes.
 */
export function classifiedNotInTraceFindings(facts: EventFacts): AuditFinding[] {
  if (facts.classifiedAs === null || facts.classification !== 'incomplete') return []
  return [finding('classified-not-in-trace', null, CLASSIFICATION_STAGE, details.classifiedNotInTrace(facts.classifiedAs))]
}
