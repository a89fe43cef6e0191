import type { FastifyInstance } from 'fastify'
import { once } from 'node:events'
import type { Readable } from 'node:stream'
import t from 'tap'
import { PulledBody } from '../../src/infrastructure/streamed-responses/pulled-body.js'
import { jsonArray, jsonObject } from '../../src/reports/json-fragments.js'
import { StoreUnavailableError } from '../../src/store/port.js'
import { buildWithProbes } from '../helper.js'

/** Every fragment a source gives, in order. */
const fragmentsOf = async (source: AsyncIterable<string>) => {
  const fragments: string[] = []
  for await (const fragment of source) fragments.push(fragment)
  return fragments
}

async function* pagesOf<T>(...pages: T[][]) {
  for (const page of pages) yield page
}

t.test('jsonArray: a page a fragment, or pieces of about 16 KiB, the bracket with the first; jsonObject holds its head back until then', async (t) => {
  t.strictSame(await fragmentsOf(jsonArray(pagesOf([1, 2], [], [3]), String)), ['[1,2', ',3', ']'])
  const big = ['a', 'b', 'c', 'd'].map((letter) => letter.repeat(10_000))
  t.strictSame(
    await fragmentsOf(jsonArray(pagesOf(big), (text) => text)),
    [`[${big[0]},${big[1]}`, `,${big[2]},${big[3]}`, ']'],
    'a large page is cut once a piece reaches 16 KiB, so a client that does not read pins no page of text'
  )
  t.strictSame(await fragmentsOf(jsonArray(pagesOf<number>([], []), String)), ['[]'])
  t.strictSame(await fragmentsOf(jsonArray(pagesOf<number>(), String)), ['[]'])

  let counted = 0
  const counting = jsonArray(pagesOf([{ n: 1 }], [{ n: 2 }]), (element) => (counted++, JSON.stringify(element)))
  const fragments = await fragmentsOf(
    jsonObject([
      ['window', '{"start":"a"}'],
      ['events', counting],
      ['summary', () => JSON.stringify({ events: counted })]
    ])
  )
  t.strictSame(fragments, ['{"window":{"start":"a"},"events":[{"n":1}', ',{"n":2}', ']', ',"summary":{"events":2}}'])
  t.strictSame(JSON.parse(fragments.join('')), { window: { start: 'a' }, events: [{ n: 1 }, { n: 2 }], summary: { events: 2 } })
})

/** Releases the probe event stream's one event, whenever it is called. */
let sendEvent = () => {}
let eventSent = Promise.resolve()

/** An app with probe routes that stream through the shared machinery, as the live stream will. */
const withProbes = (t: Parameters<typeof buildWithProbes>[0]) => {
  eventSent = new Promise<void>((resolve) => (sendEvent = resolve))
  return buildWithProbes(
    t,
    (app: FastifyInstance) => {
      // An event stream that says hello, sends one event when asked, then waits for more that never come.
      app.get('/probe/events', async (_request, reply) => {
        async function* events() {
          yield 'retry: 1000\n\n'
          await eventSent
          yield 'data: 1\n\n'
          await new Promise(() => {})
        }
        reply.type('text/event-stream')
        return app.streamedResponses.send(reply, events(), { openEnded: true })
      })
      // A document whose store fails before its first fragment, or after it.
      app.get('/probe/fails-at-once', async (_request, reply) => {
        // eslint-disable-next-line require-yield -- a source that fails before its first fragment
        async function* failing(): AsyncGenerator<string> {
          throw new StoreUnavailableError('down')
        }
        return app.streamedResponses.send(reply, failing())
      })
      app.get('/probe/fails-later', async (_request, reply) => {
        async function* failing() {
          yield '[1'
          throw new StoreUnavailableError('down')
        }
        return app.streamedResponses.send(reply, failing())
      })
    },
    { MAX_STREAMED_RESPONSES: '1' }
  )
}

const readAll = async (stream: Readable) => {
  let text = ''
  for await (const chunk of stream) text += chunk
  return text
}

t.test('a body goes out in full chunks of 16 KiB: what is left of a cut fragment goes with the next one, the first fragment as it is', async (t) => {
  const CHUNK = 16 * 1024
  const chunksOf = async (fragments: string[]) => {
    async function* source() {
      yield* fragments
    }
    const iterator = source()
    const body = new PulledBody(iterator, await iterator.next(), { stallMs: 60_000, onStall: () => {} })
    const chunks: string[] = []
    for await (const chunk of body) chunks.push(String(chunk))
    body.destroy()
    return chunks
  }
  const fragments = ['a', 'b', 'c', 'd'].map((letter) => letter.repeat(CHUNK + 100))
  const chunks = await chunksOf(fragments)
  t.equal(chunks.join(''), fragments.join(''), 'every character, in order')
  t.strictSame(
    chunks.map((chunk) => chunk.length),
    [CHUNK, CHUNK, CHUNK, CHUNK, 400],
    'no chunk of a cut fragment’s rest alone: each but the last is full'
  )
  t.strictSame((await chunksOf(['[1', ',2', ']'])).map((chunk) => chunk.length), [2, 3], 'a short first fragment goes at once, the rest joined')
})

t.test('an event stream: each event sent at once; it ends cleanly when the server closes, while waiting for the next', async (t) => {
  const app = await withProbes(t)
  const response = await app.inject({ url: '/probe/events', payloadAsStream: true })
  t.equal(response.statusCode, 200)
  const stream = response.stream()
  const [hello] = (await once(stream, 'data')) as [Buffer]
  t.equal(String(hello), 'retry: 1000\n\n')
  const event = once(stream, 'data') as Promise<[Buffer]>
  sendEvent()
  t.equal(String((await event)[0]), 'data: 1\n\n', 'an event goes out as soon as it is made')
  const closed = app.close()
  t.equal(await readAll(stream), '', 'the stream ended, without an error')
  await closed
})

t.test('a source that fails at once is its error, before any byte; one that fails later cuts the body', async (t) => {
  const app = await withProbes(t)
  for (let attempt = 0; attempt < 2; attempt++) {
    const response = await app.inject({ url: '/probe/fails-at-once' })
    t.equal(response.statusCode, 503, 'the store error, not the bound: the slot was given back')
    t.strictSame(response.json(), { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' })
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    const response = await app.inject({ url: '/probe/fails-later', payloadAsStream: true })
    t.equal(response.statusCode, 200, 'the status was sent with the first fragment')
    await t.rejects(readAll(response.stream()), 'the body does not end as if complete')
  }
})
