/**
 * What opening a store does when there is none yet: `refuse` (a command that reads, or changes what
 * exists: a mistyped path must be an error, not an empty store), `create` (a command that writes
 * data: seed, import, users add), or `create-for-demo` (a server's start: a store it creates awaits
 * the demo data set, and no other store ever receives it).
 */
export type WhenMissing = 'refuse' | 'create' | 'create-for-demo'
