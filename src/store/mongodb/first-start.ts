import type { Adapter } from '../guarded-store.js'
import type { DemoSeeding, FirstStart } from '../port.js'

/**
 * A MongoDB database never receives the demo data set: a new `users` collection says nothing of
 * whether the pipeline's own collections (shared with this service) hold real data.
 */
export class MongoFirstStart implements Adapter<FirstStart> {
  awaitsDemo(): boolean {
    return false
  }

  seedDemo(): DemoSeeding {
    return 'not-awaited'
  }
}
