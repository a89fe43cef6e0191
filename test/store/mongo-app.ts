import type { Test } from 'tap'
import { buildApp } from '../../src/app.js'
import type { Store } from '../../src/store/port.js'
import { testConfig, userWithTokens } from '../helper.js'

/** The production app over a given MongoStore, with a reader logged in; closed when the test ends. */
export async function mongoApp(t: Test, store: Store) {
  // The URL is never dialled: the app gets the store ready-made.
  const config = testConfig(t, { TRACER_STORE: 'mongodb', MONGODB_URL: 'mongodb://127.0.0.1:27017' })
  const app = await buildApp({ config, store })
  t.teardown(() => app.close())
  const reader = (await userWithTokens(app, 'operator', 'reader')).access_token
  return { app, reader }
}
