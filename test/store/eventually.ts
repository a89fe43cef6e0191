import { setTimeout as pause } from 'node:timers/promises'

/**
 * Reads until `done` holds, a few ms apart, for at most five seconds: for what another task (the
 * change-stream watcher, the upkeep) does in its own time. The bound is a hang guard, not a measure.
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const value = await read()
    if (done(value)) return value
    await pause(10)
  }
  throw new Error(`Not within five seconds: ${what}`)
}
