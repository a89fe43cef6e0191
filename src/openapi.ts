import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { SqliteStore } from './store/sqlite/store.js'

/**
 * openapi.yaml as the route schemas describe it. Built from the default configuration (not the
 * environment), so the committed file does not depend on who generated it.
 */
export async function generateOpenApiYaml(): Promise<string> {
  const config = loadConfig({
    TRACER_DB: ':memory:',
    JWT_SECRET: 'generating-the-document-signs-no-token',
    LOG_LEVEL: 'silent'
  })
  const app = await buildApp({ config, store: SqliteStore.open(':memory:') })
  try {
    return app.swagger({ yaml: true })
  } finally {
    await app.close()
  }
}
