// The reaper's commands: what a test made outside any process group (a container, a volume) is
// removed once the test process has ended, unless the test removed it itself.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'

const REAPER = join(import.meta.dirname, 'reaper.js')

t.test('when its input closes, the reaper runs the commands still due, the last named first', async (t) => {
  const log = join(t.testdir(), 'log')
  const note = (word: string) => JSON.stringify(['sh', '-c', `echo ${word} >> "$0"`, log])
  const reaper = spawn(process.execPath, [REAPER], { stdio: ['pipe', 'ignore', 'inherit'] })
  reaper.stdin.end([`run ${note('volume')}`, `run ${note('container')}`, `run ${note('removed')}`, `done ${note('removed')}`, ''].join('\n'))
  const [code] = (await once(reaper, 'exit')) as [number | null]
  t.equal(code, 0)
  t.equal(readFileSync(log, 'utf8'), 'container\nvolume\n')
})
