import Database from 'better-sqlite3'

/**
 * Every better-sqlite3 connection this process opens, and every statement prepared on one, kept
 * until the process exits: none of them may ever be garbage collected.
 *
 * Why: better-sqlite3 12 wraps its Database and Statement objects in node::ObjectWrap, whose
 * header is compiled into the addon. From Node 24 on that header registers an environment cleanup
 * hook for each object and removes it in the destructor, through the environment of the isolate's
 * current context; when V8 collects a statement at a moment when that context is not one of Node's,
 * the environment is null and Node aborts the process (`Assertion failed: (env) != nullptr` in
 * `Statement::~Statement`, exit 134). On Node 24.21 that killed about two `seed --demo` runs in
 * five, and servers at their first start; kept alive, none in thirty. better-sqlite3 13 (N-API)
 * does not have the flaw but does not run on Node 20, which the service supports too.
 *
 * A kept object is deleted when the process exits, by the cleanup hook it registered, while the
 * environment still exists. The cost is memory for what is opened: a connection prepares its
 * statements once (about sixty objects), and a server opens one connection for its life (a reopen
 * after a read-only or broken file adds one), so this never grows with the requests served.
 */
const kept: object[] = []

function keep<T extends object>(handle: T): T {
  kept.push(handle)
  return handle
}

/**
 * `db`, kept alive for the life of the process, with every statement prepared on it kept too.
 * `prepare` keeps what it returns; `pragma`, which better-sqlite3 runs through a statement it makes
 * and drops, runs through a kept one. Statements the library caches itself (the transaction
 * controller's) live as long as the connection does.
 */
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

/** `new Database(path, options)`, kept alive (see keptAlive): the only way this service opens a connection. */
export function openKeptDatabase(path: string, options?: Database.Options): Database.Database {
  return keptAlive(new Database(path, options))
}

/** How many connections and statements this process keeps (for tests of the bound). */
export const keptCount = () => kept.length
