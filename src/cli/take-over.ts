import { Command } from 'commander'
import type { CliIo } from './io.js'
import { withStore } from './store.js'

/**
 * `tracer take-over`: the operator's act that lets a start with other TRACER_SITES or
 * STAGE_DEADLINES follow an instance that stopped without removing its lease (a kill -9, a lost
 * host). A start never takes that decision by itself, since a lease that lapsed may also be an
 * instance that is only held up. Removes lapsed leases only: a live instance keeps its own.
 */
export function takeOverCommand(io: CliIo): Command {
  return new Command('take-over')
    .description('remove the leases of instances that stopped without a clean stop (never a live one), so that the next start may change TRACER_SITES or STAGE_DEADLINES')
    .action(async () => {
      await withStore(io, 'refuse', async () => {}, 'take-over', { notify: (line) => void io.stdout.write(`${line}\n`) })
    })
}
