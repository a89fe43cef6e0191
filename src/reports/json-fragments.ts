/**
 * About the size of a chunk a streamed body sends at a time (pulled-body.ts joins fragments up to
 * that): larger fragments would be held whole for a client that does not read, smaller ones cost
 * a turn of the generator each.
 */
export const FRAGMENT_CHARS = 16 * 1024

/**
 * JSON documents as text fragments of a streamed body (see streamed-responses.ts). Each is
 * produced on demand, and nothing before the first page of data is read: a store that fails at
 * once still fails before the status is sent.
 */

/**
 * `[`, the elements of every page separated by commas, `]`: one page of elements held at a time,
 * joined into fragments of about FRAGMENT_CHARS (a fragment an element cost a
 * turn of the generator each; a fragment a page, a page's text held for a client that does not read).
 */
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

/**
 * A member's value: JSON text made beforehand, text made when the member is reached (a summary
 * counted while an earlier member streamed), or streamed fragments (a jsonArray).
 */
export type JsonMember = string | (() => string) | AsyncIterable<string>

/**
 * `{"name":value,...}` in the order given. The text before a streamed member is held back and sent
 * with its first fragment, so the object's first fragment also waits for the first page.
 */
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
