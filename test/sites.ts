import { loadConfig } from '../src/config.js'

/** The service's default sites (chime, kko, gbo, hco), as a store or rule made for a test is given them. */
export const defaultSites = loadConfig({}).TRACER_SITES
