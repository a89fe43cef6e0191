/** The markers around the README's block that the bench writes; the prose around them is the lead's. */
export const BENCH_BEGIN = '<!-- bench:begin -->'
export const BENCH_END = '<!-- bench:end -->'

/**
 * `readme` with everything between the markers replaced by `block`. Throws, changing nothing, unless
 * each marker is there exactly once and in order: a guess at where the block belongs could overwrite
 * hand-written text.
 */
export function spliceBenchBlock(readme: string, block: string): string {
  const begin = readme.indexOf(BENCH_BEGIN)
  const end = readme.indexOf(BENCH_END)
  for (const [marker, at] of [
    [BENCH_BEGIN, begin],
    [BENCH_END, end]
  ] as const) {
    if (at === -1) throw new Error(`README.md has no ${marker} marker`)
    if (readme.indexOf(marker, at + marker.length) !== -1) throw new Error(`README.md has ${marker} more than once`)
  }
  if (end < begin) throw new Error(`README.md has ${BENCH_END} before ${BENCH_BEGIN}`)
  // Blank lines around the block: Markdown then ends its last table or list before the end marker.
  return `${readme.slice(0, begin + BENCH_BEGIN.length)}\n\n${block.trim()}\n\n${readme.slice(end)}`
}
