import { join } from 'node:path'
import t from 'tap'
import { run } from './run.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { defaultSites } from '../sites.js'

t.test('users add, list, set-role, passwd and remove', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const add = await run(['users', 'add', 'ana', '--role', 'writer', '--password-stdin'], env, 'correct horse\r\n')
  t.equal(add.status, 0, add.stderr)
  t.match(add.stdout, /Created user "ana" with role writer/)
  t.equal((await run(['users', 'add', 'bob', '--password-stdin'], env, 'pw\n')).status, 0)

  const list = await run(['users', 'list', '--json'], env)
  t.equal(list.status, 0)
  t.match(JSON.parse(list.stdout), [
    { name: 'ana', role: 'writer', created: /^\d{4}-\d\d-\d\dT/ },
    { name: 'bob', role: 'reader' }
  ])
  const created = (JSON.parse(list.stdout) as { created: string }[]).map((user) => user.created)
  t.equal(
    (await run(['users', 'list'], env)).stdout,
    ['name  role    created', `ana   writer  ${created[0]}`, `bob   reader  ${created[1]}`, ''].join('\n'),
    'aligned plain text: no index column, no quotes'
  )

  t.equal((await run(['users', 'set-role', 'bob', 'admin'], env)).status, 0)
  t.equal((await run(['users', 'passwd', 'bob', '--password-stdin'], env, 'new\n')).status, 0)
  t.equal((await run(['users', 'remove', 'ana'], env)).status, 0)
  t.match(JSON.parse((await run(['users', 'list', '--json'], env)).stdout), [{ name: 'bob', role: 'admin' }])
})

t.test('users list on a store without users says so', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  await openSqliteStore(env.TRACER_DB, defaultSites).close()
  t.equal((await run(['users', 'list'], env)).stdout, 'No users: add one with `tracer users add <name> --password-stdin`.\n')
})

t.test('mistakes end with exit status 1 and one line on stderr', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  await run(['users', 'add', 'ana', '--password-stdin'], env, 'pw\n')
  const cases: [string[], string, RegExp][] = [
    [['users', 'add', 'ana', '--password-stdin'], 'pw\n', /user "ana" exists already/],
    [['users', 'add', 'bob', '--password-stdin'], '', /standard input ended before a line was read/],
    [['users', 'add', 'bob', '--password-stdin'], '\n', /the password must have 1 to 256 characters/],
    [['users', 'add', 'bob'], 'pw\n', /required option '--password-stdin' not specified/],
    [['users', 'add', 'bob', '--role', 'root', '--password-stdin'], 'pw\n', /Allowed choices are reader, writer, admin/],
    [['users', 'set-role', 'ana', 'root'], '', /Allowed choices are reader, writer, admin/],
    [['users', 'set-role', 'nobody', 'admin'], '', /no user "nobody"/],
    [['users', 'remove', 'nobody'], '', /no user "nobody"/],
    [['users', 'passwd', 'nobody', '--password-stdin'], 'pw\n', /no user "nobody"/]
  ]
  for (const [args, input, message] of cases) {
    const result = await run(args, env, input)
    t.equal(result.status, 1, args.join(' '))
    t.match(result.stderr, message, args.join(' '))
  }
})

t.test('--help works for every command', async (t) => {
  const commands = [[], ['serve'], ['openapi'], ['users'], ...['add', 'list', 'set-role', 'remove', 'passwd'].map((c) => ['users', c])]
  for (const command of commands) {
    const result = await run([...command, '--help'], {})
    t.equal(result.status, 0, command.join(' '))
    t.match(result.stdout, /^Usage: tracer/, command.join(' '))
  }
})
