import type { SessionDeps } from './session.js'
import { sleep, type StreamDeps } from './stream.js'

/** The real world the page lives in; the unit tests give the same modules fakes instead. */
export const browserDeps: SessionDeps = { fetch: (input, init) => fetch(input, init), now: () => Date.now() }

export const streamDeps = (fetchWithToken: StreamDeps['fetch']): StreamDeps => ({
  fetch: fetchWithToken,
  now: () => Date.now(),
  random: Math.random,
  sleep
})
