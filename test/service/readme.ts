import { readFileSync } from 'node:fs'
import t from 'tap'
import { ConfigSchema } from '../../src/config.js'
import { serveNodeOptions } from '../../src/package-info.js'

const readme = readFileSync('README.md', 'utf8')
const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts

t.test('the README documents every configuration variable', async (t) => {
  for (const name of Object.keys(ConfigSchema.properties)) {
    t.match(readme, new RegExp('^\\| `' + name + '` \\|', 'm'), name)
  }
})

t.test('the set-up commands of the README exist, and npm start runs what the process tests run', async (t) => {
  t.match(readme, 'npm install && npm start')
  t.match(readme, 'npm install && npm test')
  t.match(scripts.start, /&& node (--\S+ )*dist\/src\/cli\.js serve$/)
  t.ok(serveNodeOptions.some((option) => option.startsWith('--max-old-space-size=')), 'the heap is capped: RSS stays under 200 MB')
  t.match(scripts.tracer, /&& node dist\/src\/cli\.js$/)
})
