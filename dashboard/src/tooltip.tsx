import { useEffect, useLayoutEffect, useRef } from 'preact/hooks'

export interface Tip {
  /** The cell it belongs to. */
  id: string
  /** The cell itself: the tooltip stays beside it when the layout moves it. */
  anchor: HTMLElement
  /** The first line is the cell's place and state, the others its findings. */
  lines: string[]
}

const GAP = 6

/**
 * The findings of the cell under the pointer or the focus, beside it. For the eye only: each cell
 * carries the same text as its accessible description. Placed by the CSSOM, which the page's
 * Content-Security-Policy allows (style attributes in markup it does not), and placed again
 * whenever the page scrolls, resizes or moves the cell (rows coming and going, a notice above); a
 * cell that has left the page takes its tooltip with it.
 */
export function Tooltip({ tip, onLeave }: { tip: Tip; onLeave: () => void }) {
  const box = useRef<HTMLDivElement>(null)
  const leave = useRef(onLeave)
  leave.current = onLeave

  const place = () => {
    const element = box.current
    if (element === null) return
    const anchor = tip.anchor.getBoundingClientRect()
    // Gone, hidden, or out of sight (under the sticky masthead, or off the screen): nothing to explain.
    const masthead = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--masthead-height')) || 0
    if (!tip.anchor.isConnected || anchor.width === 0 || anchor.bottom <= masthead || anchor.top >= window.innerHeight) return leave.current()
    const { width, height } = element.getBoundingClientRect()
    const below = anchor.bottom + GAP
    element.style.left = `${Math.max(GAP, Math.min(anchor.left, window.innerWidth - width - GAP))}px`
    element.style.top = `${below + height > window.innerHeight ? Math.max(GAP, anchor.top - height - GAP) : below}px`
  }
  // After every render of the grid, which may have moved the cell.
  useLayoutEffect(place)
  useEffect(() => {
    const follow = () => place()
    const moved = new ResizeObserver(follow)
    moved.observe(document.body)
    moved.observe(tip.anchor)
    // Capture: a scroll of any scrolling box (the grid's frame too) moves the cell.
    document.addEventListener('scroll', follow, { capture: true, passive: true })
    window.addEventListener('resize', follow)
    return () => {
      moved.disconnect()
      document.removeEventListener('scroll', follow, { capture: true })
      window.removeEventListener('resize', follow)
    }
  }, [tip])
  return (
    <div ref={box} class="tooltip" aria-hidden="true" onMouseLeave={onLeave}>
      <strong>{tip.lines[0]}</strong>
      {tip.lines.slice(1).map((line) => (
        <p>{line}</p>
      ))}
    </div>
  )
}
