interface Progress {
  update(value: number): void
  stop(): void
}

const NONE: Progress = { update() {}, stop() {} }

/** A progress bar on `stream` when it is a terminal; none in a file or a pipe (CI, tests), whose log its control characters would clutter. */
export async function progressBar(
  stream: NodeJS.WritableStream,
  total: number,
  { label, format }: { label: string; format?: (value: number) => string }
): Promise<Progress> {
  if ((stream as { isTTY?: boolean }).isTTY !== true) return NONE
  // Loaded only for a terminal: its text-width tables take memory every other process (`serve` above all) would carry.
  const { default: cliProgress } = await import('cli-progress')
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {duration_formatted} elapsed, ETA {eta_formatted}`,
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 50,
      formatValue: (value, barOptions, type) =>
        format !== undefined && (type === 'value' || type === 'total') ? format(value) : cliProgress.Format.ValueFormat(value, barOptions, type)
    },
    cliProgress.Presets.shades_classic
  )
  bar.start(total, 0)
  let running = true
  return {
    update: (value) => bar.update(value),
    stop: () => {
      if (running) bar.stop()
      running = false
    }
  }
}

/** Bytes as MiB with one decimal: file sizes in a bar. */
export const mebibytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`
