import Database from 'better-sqlite3'

/**
 * Every better-sqlite3 connection this process opens, and every statement prepared on one, is kept
 * until the process exits: none may be garbage collected. better-sqlite3 12 wraps them in
 * node::ObjectWrap, whose destructor (Node 24 on) finds the environment through the isolate's
 * current context; collected while that is not Node's, the process aborts (`Assertion failed: (env)
 * != nullptr` in `Statement::~Statement`, exit 134: two `seed --demo` runs in five on Node 24.21).
 * better-sqlite3 13 (N-API) lacks the flaw but not Node 20 support. The cost is bounded: statements
 * are prepared once per connection, and a server opens one (and one per reopen).
 */
const kept: object[] = []

function keep<T extends object>(handle: T): T {
  kept.push(handle)
  return handle
}

/** `db`, kept alive with every statement prepared on it: `pragma`, which better-sqlite3 runs through a statement it drops, runs through a kept one. */
export function keptAlive(db: Database.Database): Database.Database {
  if (kept.includes(db)) return db
  keep(db)
  const prepare = db.prepare.bind(db)
  db.prepare = ((source: string) => keep(prepare(source)))
  db.pragma = ((source: string, options: { simple?: boolean } = {}) => {
    const statement = keep(prepare(`PRAGMA ${source}`))
    if (!statement.reader) {
      statement.run()
      return options.simple === true ? undefined : []
    }
    return options.simple === true ? statement.pluck().get() : statement.all()
  })
  return db
}

/** `new Database(path, options)`, kept alive: the only way this service opens a connection. */
export function openKeptDatabase(path: string, options?: Database.Options): Database.Database {
  return keptAlive(new Database(path, options))
}
