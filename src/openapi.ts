import { stringify } from 'yaml'
import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { openSqliteStore } from './store/sqlite/store.js'

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
  const app = await buildApp({ config, store: openSqliteStore(':memory:', config.TRACER_SITES) })
  try {
    // Written out in full where the document repeats an object (both media types of one body share
    // a schema): an alias (`&a1`, `*a1`) is valid YAML, but each operation should read whole where it is.
    return stringify(app.swagger(), { aliasDuplicateObjects: false, strict: false })
  } finally {
    await app.close()
  }
}
