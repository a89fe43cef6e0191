// JSON made on demand: nothing is yielded before the first page is read, so a store that fails at once fails before the status is sent.

/** A streamed body's chunk (pulled-body.ts): larger fragments are held whole for a client that does not read, smaller ones cost a turn each. */
const FRAGMENT_CHARS = 16 * 1024

/** `[`, the elements of every page separated by commas, `]`, in fragments of about FRAGMENT_CHARS. */
export async function* jsonArray<T>(pages: AsyncIterable<T[]>, toJson: (element: T) => string): AsyncGenerator<string> {
  let text = '['
  let opened = false
  for await (const page of pages) {
    for (const element of page) {
      text += (opened ? ',' : '') + toJson(element)
      opened = true
      if (text.length >= FRAGMENT_CHARS) {
        yield text
        text = ''
      }
    }
    // Nothing of a page waits for the next: its store read may take a while.
    if (text.length > 0 && opened) {
      yield text
      text = ''
    }
  }
  yield `${text}]`
}

/** JSON text, text made when the member is reached (a summary counted while an earlier member streamed), or fragments. */
type JsonMember = string | (() => string) | AsyncIterable<string>

/** `{"name":value,...}`; the text before a streamed member waits for its first fragment, so the first page comes before any text. */
export async function* jsonObject(members: [name: string, value: JsonMember][]): AsyncGenerator<string> {
  let held = '{'
  let separator = ''
  for (const [name, value] of members) {
    held += separator + JSON.stringify(name) + ':'
    separator = ','
    if (typeof value === 'string') held += value
    else if (typeof value === 'function') held += value()
    else {
      for await (const fragment of value) {
        yield held + fragment
        held = ''
      }
    }
  }
  yield held + '}'
}
