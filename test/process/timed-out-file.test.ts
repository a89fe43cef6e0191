import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { join, resolve } from 'node:path'
import t from 'tap'
import { end, spawnOwned } from '../owned-processes.js'
import { untilTrue } from '../raw-http.js'
import { isAlive } from './processes.js'

/*
 * Issue 28, finding 3: a file that timed out left the server it started running, which held the
 * run for minutes. Nothing a test starts may outlive it, however its process ends.
 */

const TAP = resolve('node_modules/tap/dist/esm/run.mjs')

t.test('a test file that tap times out leaves no process it started running, workers included', async (t) => {
  // A project folder of its own: the inner tap keeps its .tap/ there, apart from this run's.
  const folder = resolve(t.testdir(), 'project')
  mkdirSync(folder)
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'timed-out', version: '0.0.0', private: true, type: 'module' }))
  symlinkSync(resolve('dist'), join(folder, 'dist'))
  symlinkSync(resolve('node_modules'), join(folder, 'node_modules'))
  const pidsFile = join(folder, 'pids.json')
  let pids: number[] = []
  // Should this test fail, what the file started is killed anyway.
  t.teardown(() => {
    for (const pid of pids.filter(isAlive)) process.kill(pid, 'SIGKILL')
  })

  // 120 s is only the bound on starting the processes: the file asks for 0.5 s more once they run.
  const inner = spawnOwned(process.execPath, [TAP, '--disable-coverage', '--timeout=120', '--reporter=tap', 'dist/test/process/hung-file.js'], {
    cwd: folder,
    // None of this run's TAP_* variables or loaders: the inner tap is a runner of its own.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PIDS_FILE: pidsFile },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => end(inner, 'SIGKILL'))
  let output = ''
  inner.stdout!.on('data', (chunk) => (output += chunk))
  inner.stderr!.on('data', (chunk) => (output += chunk))
  const [status] = (await once(inner, 'exit')) as [number | null]

  t.equal(status, 1, 'the inner run fails')
  t.match(output, /not ok 1 - timeout!/, 'the runner timed the file out')
  if (existsSync(pidsFile)) pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as number[]
  t.equal(pids.length, 4, 'it had started a primary, its two workers and another server')
  // The reaper kills them once the file's process is gone, which the runner may report first.
  await untilTrue(() => pids.every((pid) => !isAlive(pid)), 'no process the file started runs', 10_000)
  t.strictSame(pids.filter(isAlive), [], 'none runs')
})
