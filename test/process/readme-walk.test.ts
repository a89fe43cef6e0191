import { readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { runToEnd, startServer } from './processes.js'

/*
 * The README's five-minute walk, run as a newcomer runs it (issue 32): the built service on a
 * fresh store, then every command of the walk's shell blocks, in order, in one bash, from the
 * repository's root. Only the address changes: the walk's BASE names 127.0.0.1:8000, the test's
 * server listens on a free port. Each command must succeed, and print what the walk says it prints.
 */

const README_ADDRESS = 'http://127.0.0.1:8000'

/** One command of the walk (continued lines joined as bash joins them) and the lines the walk shows it printing. */
export interface Step {
  command: string
  printed: string[]
}

/** The walk: the README's section of that name, up to the next section. */
export function walkSection(readme: string): string {
  const start = readme.indexOf('\n## A five-minute walk\n')
  if (start === -1) throw new Error('the README has no "A five-minute walk" section')
  const next = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, next === -1 ? undefined : next)
}

/**
 * The steps of the walk's `sh` blocks. In a block, a line starting with `#` shows what the command
 * before it printed; every other line is a command, with the lines after one ending in `\`.
 */
export function stepsOf(section: string): Step[] {
  const steps: Step[] = []
  for (const [, block] of section.matchAll(/^```sh\n([\s\S]*?)^```[ \t]*$/gm)) {
    let continued = false
    for (const line of block!.split('\n')) {
      if (continued) {
        steps.at(-1)!.command += `\n${line}`
      } else if (line.startsWith('#')) {
        const step = steps.at(-1)
        if (step === undefined) throw new Error(`a block starts with what a command printed: ${line}`)
        step.printed.push(line.replace(/^# ?/, ''))
      } else if (line.trim() !== '') {
        steps.push({ command: line, printed: [] })
      }
      continued = !line.startsWith('#') && line.endsWith('\\')
    }
  }
  return steps
}

/** What the walk shows as a pattern: `...` stands for anything, the rest is literal. */
export function printedPattern(printed: string[]): RegExp {
  const parts = printed.join('\n').split('...').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${parts.join('[\\s\\S]*?')}$`)
}

const marker = (index: number) => `@@walk-step-${index}@@`

/** One bash script running every step, each between markers that carry its exit status. */
function scriptOf(steps: Step[]): string {
  return steps.map((step, index) => `printf '\\n${marker(index)}\\n'\n${step.command}\n__status=$?\nprintf '\\n${marker(index)} %d\\n' "$__status"\n`).join('')
}

/** Each step's output and exit status, from the script's standard output. */
function outputsOf(stdout: string, count: number) {
  return Array.from({ length: count }, (_, index) => {
    const begin = stdout.indexOf(`\n${marker(index)}\n`)
    const end = stdout.indexOf(`\n${marker(index)} `, begin)
    if (begin === -1 || end === -1) return undefined
    const status = Number(/^ (\d+)/.exec(stdout.slice(end + marker(index).length + 1))?.[1])
    return { output: stdout.slice(begin + marker(index).length + 2, end).replace(/\s+$/, ''), status }
  })
}

t.test('the steps are read as the README shows them', async (t) => {
  const steps = stepsOf('\n## A five-minute walk\n\n```sh\nA=1\necho "$A" \\\n  two\n# 1 two\n```\n\ntext\n\n```sh\ncurl x\n# {"a":...}\n# ...\n```\n')
  t.strictSame(steps, [
    { command: 'A=1', printed: [] },
    { command: 'echo "$A" \\\n  two', printed: ['1 two'] },
    { command: 'curl x', printed: ['{"a":...}', '...'] }
  ])
  t.match('{"a":1}\nmore\nlines', printedPattern(steps[2]!.printed))
  t.notMatch('{"b":1}', printedPattern(steps[2]!.printed))
  t.notMatch('1 two and more', printedPattern(steps[1]!.printed), 'what is not `...` is matched whole')
})

t.test("the README's five-minute walk runs as written on a fresh store", async (t) => {
  const section = walkSection(readFileSync('README.md', 'utf8'))
  t.match(section, `BASE=${README_ADDRESS}\n`, 'the walk names where the service listens in BASE')
  t.notMatch(section, /TRACER_ADMIN_PASSWORD|change-me/, 'and logs in with no password the reader did not choose')
  const steps = stepsOf(section)
  t.ok(steps.length >= 10, `${steps.length} commands`)

  // t.testdir() empties the folder at each call: once, for the store and the script.
  const folder = t.testdir()
  const store = join(folder, 'tracer.sqlite')
  const server = await startServer(t, { TRACER_DB: store })
  const here = steps.map((step) => ({
    command: step.command.replaceAll(README_ADDRESS, server.url),
    printed: step.printed.map((line) => line.replaceAll(README_ADDRESS, server.url))
  }))

  // The reader's own shell: the store the service uses (data/tracer.sqlite in a checkout), nothing
  // of the test's environment. The script is a file, so no command can read the rest of it as input.
  const script = join(folder, 'walk.sh')
  writeFileSync(script, scriptOf(here))
  const { status, stdout, stderr } = await runToEnd('bash', ['--noprofile', '--norc', script], {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    TRACER_DB: store
  })
  t.equal(status, 0, 'bash ran to the end')

  const outputs = outputsOf(stdout, here.length)
  here.forEach((step, index) => {
    const ran = outputs[index]
    if (ran === undefined) return t.fail(`not run: ${step.command}\n${stderr}`)
    t.equal(ran.status, 0, `exit status 0: ${step.command}${ran.status === 0 ? '' : `\n${stderr}`}`)
    if (step.printed.length > 0) t.match(ran.output, printedPattern(step.printed), `prints what the walk shows: ${step.command}`)
  })
})
