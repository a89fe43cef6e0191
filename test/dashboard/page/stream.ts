import t from 'tap'
import type { StreamedTransition } from '../../../dashboard/src/api-types.js'
import { SessionEnded } from '../../../dashboard/src/errors.js'
import { retryDelay, TraceStream, transitionParser, type StreamState } from '../../../dashboard/src/stream.js'
import { json } from './fake-fetch.js'

const first: StreamedTransition = { event_no: 7, key: 'stages/baseband_conversion/sites/kko', from: 'incomplete', to: 'complete', at: 1.5, by: 'pipeline' }
const second: StreamedTransition = { event_no: 8, key: 'stages/tsar_classification', from: null, to: 'complete', at: 2.25, by: 'pipeline' }
const message = (event: string, data: unknown) => `event: ${event}\ndata: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`
const text = [
  ': keep-alive\n\n',
  message('transition', first),
  message('other', first),
  message('transition', '{"broken'),
  message('transition', { event_no: 9, key: 'stages/x' }),
  message('transition', second)
].join('')

t.test('transitions are read from chunks cut anywhere; comments, other events and bad data are skipped', async (t) => {
  for (let cut = 0; cut <= text.length; cut++) {
    const seen: StreamedTransition[] = []
    const parser = transitionParser((transition) => seen.push(transition))
    parser.feed(text.slice(0, cut))
    parser.feed(text.slice(cut))
    if (!t.strictSame(seen, [first, second], `cut at ${cut}`)) break
  }
  const bytewise: StreamedTransition[] = []
  const parser = transitionParser((transition) => bytewise.push(transition))
  for (const character of text.replace(/\n/g, '\r\n')) parser.feed(character)
  t.strictSame(bytewise, [first, second], 'CRLF line ends, one character at a time')
})

t.test('reconnection backs off exponentially with jitter, up to 3 s, so a service back is followed within 5 s', async (t) => {
  t.strictSame([0, 1, 2, 3, 4, 10, 100].map((attempt) => retryDelay(attempt, () => 0.999999)), [1000, 2000, 3000, 3000, 3000, 3000, 3000])
  t.strictSame([0, 1, 5].map((attempt) => retryDelay(attempt, () => 0)), [500, 1000, 1500], 'half the step at least')
})

/** A response whose body is `chunks`, and then either ends or stays open until the request is aborted. */
function eventStream(chunks: string[], signal: AbortSignal, end: boolean): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk))
      if (end) controller.close()
      else signal.addEventListener('abort', () => controller.error(signal.reason))
    }
  })
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
}

function follow(answers: ((signal: AbortSignal) => Response | Promise<Response>)[]) {
  const states: StreamState[] = []
  const seen: StreamedTransition[] = []
  const delays: number[] = []
  const paths: string[] = []
  let connected = 0
  let ended: SessionEnded | undefined
  let settled: () => void = () => {}
  const done = new Promise<void>((resolve) => (settled = resolve))
  const stream = new TraceStream(
    {
      fetch: async (path, init) => {
        paths.push(path)
        const answer = answers.shift()
        if (answer === undefined) {
          settled()
          return new Promise<Response>(() => {})
        }
        return answer(init.signal!)
      },
      now: () => 0,
      random: () => 0.999999,
      sleep: async (ms) => void delays.push(ms)
    },
    {
      onTransition: (transition) => seen.push(transition),
      onState: (state) => states.push(state),
      onConnected: () => connected++,
      onSessionEnded: (error) => ((ended = error), settled())
    }
  )
  return { stream, states, seen, delays, paths, done, connected: () => connected, ended: () => ended }
}

t.test('the stream is followed across drops and refusals, and read afresh after each connection', async (t) => {
  const run = follow([
    (signal) => eventStream([message('transition', first)], signal, true),
    () => json(503, { reasons: ['Too many open streams.'], exception: 'ServiceUnavailable' }),
    () => Promise.reject(new TypeError('Failed to fetch')),
    (signal) => eventStream([message('transition', second)], signal, true)
  ])
  run.stream.start()
  await run.done
  run.stream.stop()
  t.strictSame(run.seen, [first, second])
  t.equal(run.connected(), 2, 'the page reads the window again on each connection, since transitions may have been missed')
  t.strictSame(run.paths, Array(5).fill('/v1/event-tracer/stream'))
  t.strictSame(run.delays, [1000, 2000, 3000, 1000], 'the backoff grows with failures and starts over after a connection')
  t.strictSame(
    run.states.map((state) => (state.kind === 'waiting' ? `waiting: ${state.reason}` : state.kind)),
    [
      'connecting',
      'live',
      'waiting: The stream was closed by the service.',
      'connecting',
      'waiting: Too many open streams.',
      'connecting',
      'waiting: The service cannot be reached (network error).',
      'connecting',
      'live',
      'waiting: The stream was closed by the service.',
      'connecting',
      'stopped'
    ]
  )
})

t.test('stopping ends an open stream; an ended session stops it', async (t) => {
  const open = follow([(signal) => eventStream([message('transition', first)], signal, false)])
  open.stream.start()
  while (open.seen.length === 0) await new Promise((resolve) => setImmediate(resolve))
  open.stream.stop()
  await new Promise((resolve) => setImmediate(resolve))
  t.strictSame(open.states.map((state) => state.kind), ['connecting', 'live', 'stopped'], 'no reconnection after stop')
  t.strictSame(open.delays, [])

  const ended = follow([() => Promise.reject(new SessionEnded('Your session has ended.'))])
  ended.stream.start()
  await ended.done
  t.equal(ended.ended()?.message, 'Your session has ended.')
  t.strictSame(ended.states.map((state) => state.kind), ['connecting', 'stopped'])
})
