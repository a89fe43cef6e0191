import { Value } from '@sinclair/typebox/value'
import { Argument, Command, Option } from 'commander'
import { createInterface } from 'node:readline'
import { PasswordSchema, roles, UsernameSchema, type Role } from '../../schemas/auth.js'
import { hashPassword } from '../auth/passwords.js'
import { CliError } from '../cli-error.js'
import { consoleOf, type CliIo } from './io.js'
import type { Store } from '../store/port.js'
import { withStore } from './store.js'
import { aligned, printable } from './text-table.js'

/** The password: the first line of standard input, without its line ending. */
async function passwordFromStdin(io: CliIo): Promise<string> {
  const lines = createInterface({ input: io.stdin, terminal: false })
  try {
    for await (const password of lines) {
      if (!Value.Check(PasswordSchema, password)) throw new CliError('the password must have 1 to 256 characters')
      return password
    }
  } finally {
    lines.close()
  }
  throw new Error('standard input ended before a line was read')
}

const passwordStdinOption = () => new Option('--password-stdin', 'read the password from the first line of standard input').makeOptionMandatory()

/** Users depend on no site or deadline: a users command runs whatever the store's configuration, and leaves it as it is. */
const usersStore = <T>(io: CliIo, whenMissing: 'create' | 'refuse', work: (store: Store) => Promise<T>, access: 'read-write' | 'read-only' = 'read-write') =>
  withStore(io, whenMissing, work, 'ignore', { access })

/** Changes an existing user: `change` says whether there was one. */
async function changeUser(io: CliIo, name: string, change: (store: Store) => Promise<boolean>): Promise<void> {
  if (!(await usersStore(io, 'refuse', change))) throw new CliError(`no user "${name}"`)
}

export function usersCommand(io: CliIo): Command {
  const console = consoleOf(io)
  const users = new Command('users').description('manage the users who may obtain tokens')

  users
    .command('add')
    .description('create a user')
    .argument('<name>', 'user name')
    .addOption(new Option('--role <role>', 'role of the user').choices(roles).default('reader' satisfies Role))
    .addOption(passwordStdinOption())
    .action(async (name: string, options: { role: Role }) => {
      if (!Value.Check(UsernameSchema, name)) throw new CliError('a user name has 1 to 256 characters')
      const passwordHash = await hashPassword(await passwordFromStdin(io))
      const user = { name, password_hash: passwordHash, role: options.role }
      const created = await usersStore(io, 'create', (store) => store.users.create({ ...user, created_at: Date.now() }))
      if (!created) throw new CliError(`user "${name}" exists already`)
      console.log(`Created user "${name}" with role ${options.role}.`)
    })

  users
    .command('list')
    .description('list the users, their roles and creation times')
    .option('--json', 'print JSON instead of a table')
    .action(async (options: { json?: boolean }) => {
      const listed = await usersStore(io, 'refuse', (store) => store.users.list(), 'read-only')
      const rows = listed.map((user) => ({ name: user.name, role: user.role, created: new Date(user.created_at).toISOString() }))
      if (options.json === true) console.log(JSON.stringify(rows, null, 2))
      else if (rows.length === 0) console.log('No users: add one with `tracer users add <name> --password-stdin`.')
      else console.log(aligned([['name', 'role', 'created'], ...rows.map(({ name, role, created }) => [printable(name), role, created])]).join('\n'))
    })

  users
    .command('set-role')
    .description('change the role of a user (a running server applies it within 5 seconds)')
    .argument('<name>', 'user name')
    .addArgument(new Argument('<role>', 'new role').choices(roles))
    .action(async (name: string, role: Role) => {
      await changeUser(io, name, (store) => store.users.setRole(name, role))
      console.log(`User "${name}" now has role ${role}.`)
    })

  users
    .command('remove')
    .description('delete a user; tokens already issued stay valid until they expire')
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      await changeUser(io, name, (store) => store.users.remove(name))
      console.log(`Removed user "${name}".`)
    })

  users
    .command('passwd')
    .description("set a user's password; the user's refresh token stops working")
    .argument('<name>', 'user name')
    .addOption(passwordStdinOption())
    .action(async (name: string) => {
      const passwordHash = await hashPassword(await passwordFromStdin(io))
      await changeUser(io, name, (store) => store.users.setPasswordHash(name, passwordHash))
      console.log(`Changed the password of "${name}".`)
    })

  return users
}
