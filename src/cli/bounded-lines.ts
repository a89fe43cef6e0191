/** A line longer than the limit: refused as soon as its bytes pass it, before the rest is read. */
export class LineTooLongError extends Error {
  override name = 'LineTooLongError'

  constructor(
    readonly lineNo: number,
    readonly limitBytes: number
  ) {
    super(`line ${lineNo} is longer than ${limitBytes} bytes`)
  }
}

const NEWLINE = 0x0a
const CARRIAGE_RETURN = 0x0d

/**
 * The lines of a byte stream, numbered from 1, without their `\n` or `\r\n`; the last needs none. A
 * line is never held beyond `maxBytes` (its `\r` included) but throws LineTooLongError: readline
 * held the whole line, and failed with a RangeError past about 512 MB.
 */
export async function* boundedLines(chunks: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<{ lineNo: number; bytes: Buffer }> {
  let lineNo = 1
  let pending: Buffer[] = []
  let pendingBytes = 0
  const line = (last: Buffer) => {
    const bytes = pending.length === 0 ? last : Buffer.concat([...pending, last])
    pending = []
    pendingBytes = 0
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length
    return { lineNo: lineNo++, bytes: bytes.subarray(0, end) }
  }
  for await (const chunk of chunks) {
    let start = 0
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      if (pendingBytes + newline - start > maxBytes) throw new LineTooLongError(lineNo, maxBytes)
      yield line(chunk.subarray(start, newline))
      start = newline + 1
    }
    const rest = chunk.subarray(start)
    pendingBytes += rest.length
    if (pendingBytes > maxBytes) throw new LineTooLongError(lineNo, maxBytes)
    if (rest.length > 0) pending.push(rest)
  }
  if (pendingBytes > 0) yield line(Buffer.alloc(0))
}
