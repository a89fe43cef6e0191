import type { FeedTransition } from './records.js'

/** What a live stream asks for; an absent member lets every transition through. */
export interface TransitionFilter {
  eventNo?: number | undefined
  site?: string | undefined
}

const SITE_KEY = /^stages\/[^/]+\/sites\/([^/]+)$/

/** The site of a trace key `stages/{stage}/sites/{site}`; null for the classification key, which has none. */
export function siteOfKey(key: string): string | null {
  return SITE_KEY.exec(key)?.[1] ?? null
}

export function transitionFilter({ eventNo, site }: TransitionFilter): (transition: FeedTransition) => boolean {
  return (transition) =>
    (eventNo === undefined || transition.event_no === eventNo) && (site === undefined || siteOfKey(transition.key) === site)
}
