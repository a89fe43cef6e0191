import { STAGES, stageKey, type Sites } from '../vocabulary.js'

/** Heartbeat ids are event_no * 64 + site index: unique without a counter (a store allows 64 sites). */
export const HEARTBEAT_IDS_PER_EVENT = 64

/**
 * Every name the generator needs, derived once from the sites: per event it then only picks
 * strings and shares arrays instead of building them again.
 */
export interface DemoLayout {
  sites: readonly string[]
  /** The actions key and datatrail member of each site's baseband data. */
  members: readonly string[]
  /** Trace keys by stage, then site. */
  stageKeys: readonly (readonly string[])[]
  scopes: readonly string[]
  storageElements: readonly (readonly string[])[]
}

export function demoLayout({ names: sites, basebandKeys }: Sites): DemoLayout {
  return {
    sites,
    members: basebandKeys,
    stageKeys: STAGES.map((stage) => sites.map((site) => stageKey(stage, site))),
    scopes: sites.map((site) => `${site}.event.baseband.raw`),
    // The primary site's data goes to the archive first; an outrigger's stays on site too.
    storageElements: sites.map((site, index) => (index === 0 ? ['MINOC'] : [site.toUpperCase(), 'MINOC']))
  }
}
