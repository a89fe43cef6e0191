import {
  MongoClient,
  MongoClientClosedError,
  MongoDriverError,
  MongoInvalidArgumentError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError
} from 'mongodb'
import t from 'tap'
import { asStoreError, isDuplicateKey, retryOnDuplicateKey } from '../../src/store/mongodb/driver-errors.js'
import { StoreUnavailableError } from '../../src/store/port.js'

const named = (name: string, message: string) => Object.defineProperty(new MongoDriverError(message), 'name', { value: name })
const serverError = (code: number, codeName: string) => new MongoServerError({ message: codeName, code, codeName })

t.test('every "database unreachable" error becomes StoreUnavailableError, keeping the original as cause', async (t) => {
  const unreachable = [
    new MongoServerSelectionError('Server selection timed out after 5000 ms', {} as never),
    new MongoNetworkError('connection 3 to 10.0.0.5:27017 closed'),
    new MongoNetworkTimeoutError('connection timed out'),
    new MongoNotConnectedError('Client must be connected before running operations'),
    new MongoTopologyClosedError(),
    new MongoClientClosedError(),
    named('MongoPoolClosedError', 'Attempted to check out a connection from closed connection pool'),
    named('MongoWaitQueueTimeoutError', 'Timed out while checking out a connection from connection pool'),
    serverError(10107, 'NotWritablePrimary'),
    serverError(91, 'ShutdownInProgress'),
    serverError(11602, 'InterruptedDueToReplStateChange')
  ]
  for (const error of unreachable) {
    const mapped = asStoreError(error)
    t.type(mapped, StoreUnavailableError, error.name)
    t.equal((mapped as Error).cause, error)
  }
})

t.test('errors that are not about reachability pass unchanged (a 500, or handled by the adapter)', async (t) => {
  const others = [
    serverError(11000, 'DuplicateKey'),
    serverError(2, 'BadValue'),
    serverError(18, 'AuthenticationFailed'),
    new MongoInvalidArgumentError('Invalid BulkOperation, Batch cannot be empty'),
    new TypeError('a bug')
  ]
  for (const error of others) t.equal(asStoreError(error), error, error.message)
})

t.test('what the driver itself throws for a server nobody listens on maps to StoreUnavailableError', async (t) => {
  const client = new MongoClient('mongodb://127.0.0.1:1/?directConnection=true', { serverSelectionTimeoutMS: 100 })
  t.teardown(() => client.close())
  const error = await client.connect().then(
    () => undefined,
    (failure: unknown) => failure
  )
  t.type(error, MongoServerSelectionError)
  t.type(asStoreError(error), StoreUnavailableError)
})

t.test('a duplicate key is retried once; other errors are not', async (t) => {
  t.ok(isDuplicateKey(serverError(11000, 'DuplicateKey')))
  t.notOk(isDuplicateKey(serverError(2, 'BadValue')))
  let calls = 0
  const failingOnce = async () => {
    calls++
    if (calls === 1) throw serverError(11000, 'DuplicateKey')
    return 'updated'
  }
  t.equal(await retryOnDuplicateKey(failingOnce), 'updated')
  t.equal(calls, 2)
  calls = 0
  const network = async () => {
    calls++
    throw new MongoNetworkError('closed')
  }
  await t.rejects(retryOnDuplicateKey(network), MongoNetworkError)
  t.equal(calls, 1)
})
