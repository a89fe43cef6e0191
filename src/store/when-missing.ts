/** No store yet: `refuse` (a mistyped path is an error), `create` (seed, import, users add), `create-for-demo` (a server's start). */
export type WhenMissing = 'refuse' | 'create' | 'create-for-demo'
