import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { CliError } from '../cli-error.js'

/** Node's words when an addon was built for another Node: the addon's ABI, then this Node's. */
const MISMATCH = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/

/** The Node release lines of the ABIs a reader is likely to meet, to name the Node a module was built for. */
const NODE_OF_ABI: Record<string, string> = { 108: '18', 115: '20', 127: '22', 131: '23', 137: '24', 141: '25' }

export interface ThisNode {
  version: string
  /** Where this Node is installed: `bin/node` under it, and its headers in `include/node` when they came with it. */
  prefix: string
  hasHeaders: boolean
}

const thisNode = (): ThisNode => {
  const prefix = dirname(dirname(process.execPath))
  return { version: process.version, prefix, hasHeaders: existsSync(join(prefix, 'include', 'node', 'node_version.h')) }
}

/**
 * A native module built for another Node's ABI, as one line naming both and a rebuild that works:
 * Node's `npm rebuild` builds the same wrong module when npm's `nodedir` names another Node's headers.
 */
export function nativeModuleMismatch(error: unknown, node: ThisNode = thisNode()): CliError | undefined {
  const message = error instanceof Error ? error.message : ''
  const versions = MISMATCH.exec(message)
  if (versions === null) return undefined
  const [, builtFor, wanted] = versions as unknown as [string, string, string]
  const name = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(message)?.[1] ?? 'a native module'
  const built = NODE_OF_ABI[builtFor] === undefined ? `Node ABI ${builtFor}` : `Node ABI ${builtFor} (Node ${NODE_OF_ABI[builtFor]})`
  const fix = node.hasHeaders
    ? `run \`npm_config_nodedir=${node.prefix} npm rebuild ${name}\` with this Node first on PATH (npm's nodedir must point to this Node's headers, not another's)`
    : `run \`npm rebuild ${name}\` with this Node first on PATH, and npm_config_nodedir unset or pointing to this Node's headers (a nodedir in .npmrc builds for the Node it names)`
  return new CliError(`${name} was built for ${built}, this is Node ${node.version} (ABI ${wanted}): ${fix}`)
}
