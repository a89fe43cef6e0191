import t from 'tap'
import { boundedLines, LineTooLongError } from '../../src/cli/bounded-lines.js'

async function* chunksOf(...parts: string[]) {
  for (const part of parts) yield Buffer.from(part)
}

const linesOf = async (chunks: AsyncIterable<Buffer>, max = 10) => {
  const lines: string[] = []
  for await (const line of boundedLines(chunks, max)) lines.push(`${line.lineNo}:${line.bytes.toString()}`)
  return lines
}

t.test('lines across chunks, \\r\\n, blank lines and a last line without a newline', async (t) => {
  t.strictSame(await linesOf(chunksOf('ab', 'c\nde\r', '\n\n', 'f\ng', 'h')), ['1:abc', '2:de', '3:', '4:f', '5:gh'])
  t.strictSame(await linesOf(chunksOf('')), [])
  t.strictSame(await linesOf(chunksOf('0123456789\n', '0123456789')), ['1:0123456789', '2:0123456789'], 'exactly the limit passes')
})

t.test('a line past the limit throws with its number, as soon as its bytes pass it', async (t) => {
  await t.rejects(linesOf(chunksOf('ok\n', '0123456789A\n')), new LineTooLongError(2, 10))
  await t.rejects(linesOf(chunksOf('ok\n012345', '6789A')), new LineTooLongError(2, 10), 'the last line too')
  // An endless line: what is read before the refusal is the limit and one chunk, never the line.
  let read = 0
  async function* endless() {
    for (;;) {
      read += 65_536
      yield Buffer.alloc(65_536, 0x78)
    }
  }
  await t.rejects(linesOf(endless(), 1024 * 1024), LineTooLongError)
  t.ok(read <= 1024 * 1024 + 65_536, `${read} bytes read before the refusal`)
})
