import { Double, Int32, Long, ObjectId } from 'mongodb'
import t from 'tap'
import { millisIn, numberIn, plain, toEvent } from '../../src/store/mongodb/documents.js'

t.test('BSON numbers read back as plain numbers at any depth; dates and ids are left alone', async (t) => {
  const when = new Date('2024-05-01T00:00:00Z')
  const id = new ObjectId()
  t.strictSame(
    plain({ event_no: Long.fromNumber(3_100_000_002), a: [new Int32(1), new Double(2.5)], b: { c: new Double(1714557600.25) }, when, id }),
    { event_no: 3_100_000_002, a: [1, 2.5], b: { c: 1714557600.25 }, when, id }
  )
  t.equal(plain(Long.fromString('9007199254740993')), 9007199254740992, 'beyond 2^53: the nearest number')
})

t.test('numbers and times from any writer, with a fallback for anything else', async (t) => {
  t.equal(numberIn(new Int32(1714557600), 0), 1714557600)
  t.equal(numberIn('1714557600', 0), 0, 'a string is not a number')
  t.equal(numberIn(undefined, -1), -1)
  t.equal(millisIn(new Date(1_700_000_000_123), 0), 1_700_000_000_123)
  t.equal(millisIn(Long.fromNumber(1_700_000_000_000), 0), 1_700_000_000_000, 'a number is milliseconds')
})

t.test('an event document another program wrote with keys missing still reads as a whole event', async (t) => {
  t.strictSame(toEvent({ _id: new ObjectId(), event_no: new Int32(9), timestamp: new Date(5), extra: true }), {
    event_no: 9,
    timestamp: 5,
    snr: 0,
    dm: null,
    known_source_name: '',
    tsar_classification: null,
    actions: { want: {}, got: {} },
    baseband_requested: false,
    update_timestamp: 0
  })
})
