import { readFileSync } from 'node:fs'
import t from 'tap'
import { BENCH_BEGIN, BENCH_END, spliceBenchBlock } from '../../bench/readme-splice.js'

const readme = ['# Title', '', '## Performance', '', 'How it is measured.', '', BENCH_BEGIN, 'old figures', BENCH_END, '', 'What they mean.', ''].join('\n')

t.test('the block between the markers is replaced, the text around them kept', async (t) => {
  const spliced = spliceBenchBlock(readme, '| new | figures |\n')
  t.equal(spliced, ['# Title', '', '## Performance', '', 'How it is measured.', '', BENCH_BEGIN, '', '| new | figures |', '', BENCH_END, '', 'What they mean.', ''].join('\n'))
  t.equal(spliceBenchBlock(spliced, '| new | figures |'), spliced, 'splicing the same block again changes nothing')
})

t.test('a README whose markers are missing, doubled or out of order is refused', async (t) => {
  const without = (marker: string) => readme.replace(marker, '')
  t.throws(() => spliceBenchBlock(without(BENCH_BEGIN), 'x'), /no <!-- bench:begin --> marker/)
  t.throws(() => spliceBenchBlock(without(BENCH_END), 'x'), /no <!-- bench:end --> marker/)
  t.throws(() => spliceBenchBlock(`${readme}\n${BENCH_BEGIN}\n`, 'x'), /<!-- bench:begin --> more than once/)
  t.throws(() => spliceBenchBlock(`${BENCH_END}\n${readme}`, 'x'), /<!-- bench:end --> more than once/)
  t.throws(() => spliceBenchBlock(`${BENCH_END}\n${BENCH_BEGIN}\n`, 'x'), /<!-- bench:end --> before <!-- bench:begin -->/)
})

t.test('the repository’s README has one bench block, in its Performance section', async (t) => {
  const text = readFileSync('README.md', 'utf8')
  const section = text.slice(text.indexOf('\n## Performance\n'), text.indexOf('\n## ', text.indexOf('\n## Performance\n') + 1))
  t.doesNotThrow(() => spliceBenchBlock(text, 'x'))
  t.ok(section.includes(BENCH_BEGIN) && section.includes(BENCH_END), 'both markers in the section')
})
