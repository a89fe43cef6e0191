/** A fetch that records each call and answers from a script: what the page's network modules see. */
export interface Call {
  method: string
  path: string
  authorization: string | null
  body: unknown
}

export type Answer = (call: Call) => Response | Promise<Response>

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
}

export function fakeFetch(answer: Answer) {
  const calls: Call[] = []
  const fetch = async (input: string | URL | Request, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    const call = {
      method: init.method ?? 'GET',
      path: input instanceof Request ? input.url : input.toString(),
      authorization: headers.get('authorization'),
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined
    }
    calls.push(call)
    return answer(call)
  }
  return { calls, fetch: fetch }
}

/** An unsigned token with the claims the page reads (it never checks a signature: the service does). */
export function tokenWith(claims: { exp: number; iat: number }, id = 'a'): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ user_id: 'operator', iss: 'frb-tracer', ...claims, id })}.signature`
}
