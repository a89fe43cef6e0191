import { stringify } from 'yaml'
import { buildApp } from './app.js'
import { loadConfig } from './config.js'
import { openSqliteStore } from './store/sqlite/store.js'

/** openapi.yaml from the route schemas and the default configuration, so that it does not depend on who made it. */
export async function generateOpenApiYaml(): Promise<string> {
  const config = loadConfig({ TRACER_DB: ':memory:', JWT_SECRET: 'generating-the-document-signs-no-token', LOG_LEVEL: 'silent' })
  const app = await buildApp({ config, store: openSqliteStore(':memory:', config.TRACER_SITES) })
  try {
    // No YAML aliases (`&a1`, `*a1`) where the document repeats an object: each operation reads whole where it is.
    return stringify(app.swagger(), { aliasDuplicateObjects: false, strict: false })
  } finally {
    await app.close()
  }
}
