/** When each key first became `complete`, in seconds since the epoch; the earliest `at` wins whatever the order given. */
export function firstCompletions(transitions: readonly { key: string; to: unknown; at: number }[]): Map<string, number> {
  const first = new Map<string, number>()
  for (const { key, to, at } of transitions) {
    if (to !== 'complete') continue
    const seen = first.get(key)
    if (seen === undefined || at < seen) first.set(key, at)
  }
  return first
}
