import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { cleanUpAtEnd, spawnOwned } from '../owned-processes.js'
import { runToEnd, watched, type CliResult, type SpawnedServer } from './processes.js'

/*
 * The service's container image, built and run with podman. No container registry is reachable
 * from these machines: each base image the Containerfile names is a local stand-in of the same
 * name, which a script kept beside the repository (../shared/container/) builds, installing podman
 * first where it is missing.
 */

/** The repository's root: this file runs from dist/test/process/. */
export const ROOT = join(import.meta.dirname, '../../..')
export const CONTAINERFILE = join(ROOT, 'Containerfile')
const STAND_IN = join(ROOT, '..', 'shared', 'container', 'stand-in-base.sh')

const env = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' })

/** The images a Containerfile builds FROM, its own stages left out, in order. */
export function baseImages(containerfile: string): string[] {
  const stages = new Set<string>()
  const bases: string[] = []
  for (const [, image, stage] of containerfile.matchAll(/^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$/gim)) {
    if (!stages.has(image!.toLowerCase()) && !bases.includes(image!)) bases.push(image!)
    if (stage !== undefined) stages.add(stage.toLowerCase())
  }
  return bases
}

function hasPodman(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v podman'], { stdio: 'ignore', env: env() })
    return true
  } catch {
    return false
  }
}

/**
 * Makes every base image of the Containerfile (and podman) ready. Resolves to why the container
 * cannot be tested here when podman cannot be installed; throws on any other failure.
 */
export async function readyBaseImages(): Promise<string | undefined> {
  for (const image of baseImages(readFileSync(CONTAINERFILE, 'utf8'))) {
    if (!existsSync(STAND_IN)) {
      if (!hasPodman()) return `podman is not installed, and ${STAND_IN}, which installs it, is missing`
      if ((await podman(['image', 'exists', image])).status === 0) continue
      throw new Error(`no image ${image}, and no ${STAND_IN} to build its stand-in`)
    }
    const made = await runToEnd(STAND_IN, [image], env())
    if (made.status === 0) continue
    const why = made.stderr.trim().split('\n').slice(-3).join(' / ')
    if (!hasPodman()) return `podman cannot be installed here: ${STAND_IN} ${image} failed (${why})`
    throw new Error(`${STAND_IN} ${image} failed with ${made.status}: ${why}`)
  }
  return undefined
}

/** Runs podman to its end, `input` on its standard input. */
export function podman(args: string[], input = ''): Promise<CliResult> {
  return runToEnd('podman', args, env(), input)
}

/** Runs podman to its end, and throws with its standard error unless it succeeded; resolves to its standard output. */
export async function podmanOk(args: string[], input = ''): Promise<string> {
  const result = await podman(args, input)
  if (result.status !== 0) throw new Error(`podman ${args.join(' ')} exited with ${result.status}: ${result.stderr}`)
  return result.stdout
}

/** A name of this test process's own, for a container or a volume. */
export const ownName = (what: string) => `frb-tracer-test-${process.pid}-${what}`

/** A named volume, removed (with any container using it) when the test ends, however it ends. */
export async function ownVolume(t: Test, name: string): Promise<string> {
  const remove = ['podman', 'volume', 'rm', '--force', name]
  const release = cleanUpAtEnd(remove)
  t.teardown(async () => {
    await podman(remove.slice(1))
    release()
  })
  await podmanOk(['volume', 'create', name])
  return name
}

/**
 * `podman run` of `image` attached (so its standard output is read line by line), with `options`
 * before the image; the container is removed when the test ends, however it ends.
 */
export function runContainer(t: Test, name: string, options: string[], image: string): SpawnedServer {
  const remove = ['podman', 'rm', '--force', '--time', '0', name]
  const release = cleanUpAtEnd(remove)
  t.teardown(async () => {
    await podman(remove.slice(1))
    release()
  })
  const child = spawnOwned('podman', ['run', '--rm', '--name', name, ...options, image], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] })
  return watched(t, child)
}
