import { register } from 'node:module'

/**
 * `node --import` this module, with MODULE_LOG naming a file, to have the process list there every
 * module it loads (see module-log-hooks.ts).
 */
const file = process.env.MODULE_LOG
if (file === undefined) throw new Error('MODULE_LOG must name the file to list the loaded modules in')
register('./module-log-hooks.js', import.meta.url, { data: { file } })
