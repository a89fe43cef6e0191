import { readFileSync } from 'node:fs'
import { processTree } from './process-tree.js'

const MB = 1024 * 1024

/**
 * Resident set size of `pid` in bytes, from /proc (Linux). VmRSS is the current value; VmHWM, the
 * high-water mark, cannot be reset per scenario, so peaks are found by sampling instead.
 */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)
  if (match === null) throw new Error(`no VmRSS for process ${pid}`)
  return Number(match[1]) * 1024
}

export const toMb = (bytes: number) => bytes / MB

/** The RSS of `pid` and its descendants together: for a service with workers, the primary's and theirs. */
export function treeRssBytes(pid: number): number {
  let total = 0
  for (const member of processTree(pid)) {
    try {
      total += rssBytes(member)
    } catch {
      // Exited between the listing and the reading.
    }
  }
  return total
}

export interface RssSampler {
  /** Stops sampling; resolves the peak and the last value, in bytes. */
  stop(): { peak: number; last: number; samples: number }
}

/**
 * Samples the RSS of `pid` and its descendants every `intervalMs` until stopped. The bench's own
 * event loop is busy driving load, so a sample may come late; at 50 ms a short peak can still be
 * missed, which makes the peaks a lower bound.
 */
export function sampleRss(pid: number, intervalMs = 50): RssSampler {
  let peak = 0
  let last = 0
  let samples = 0
  const take = () => {
    const rss = treeRssBytes(pid)
    if (rss === 0) return // The process has exited: keep what was seen.
    last = rss
    samples += 1
    if (last > peak) peak = last
  }
  take()
  const timer = setInterval(take, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      take()
      return { peak, last, samples }
    }
  }
}
