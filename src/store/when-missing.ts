/**
 * When there is no store yet: `refuse` (a command that reads or changes: a mistyped path is an error),
 * `create` (seed, import, users add), `create-for-demo` (a server's start: only such a store gets the demo).
 */
export type WhenMissing = 'refuse' | 'create' | 'create-for-demo'
