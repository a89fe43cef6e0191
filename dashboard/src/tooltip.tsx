import { useLayoutEffect, useRef, useState } from 'preact/hooks'

export interface Tip {
  /** The cell it belongs to. */
  id: string
  anchor: DOMRect
  /** The first line is the cell's place and state, the others its findings. */
  lines: string[]
}

const GAP = 6

/**
 * The findings of the cell under the pointer or the focus, beside it. For the eye only: each cell
 * carries the same text as its accessible description. Placed by the CSSOM, which the page's
 * Content-Security-Policy allows (style attributes in markup it does not).
 */
export function Tooltip({ tip, onLeave }: { tip: Tip; onLeave: () => void }) {
  const box = useRef<HTMLDivElement>(null)
  const [place, setPlace] = useState({ left: tip.anchor.left, top: tip.anchor.bottom + GAP })
  useLayoutEffect(() => {
    const { width, height } = box.current!.getBoundingClientRect()
    const left = Math.max(GAP, Math.min(tip.anchor.left, window.innerWidth - width - GAP))
    const below = tip.anchor.bottom + GAP
    const top = below + height > window.innerHeight ? Math.max(GAP, tip.anchor.top - height - GAP) : below
    setPlace({ left, top })
  }, [tip])
  return (
    <div ref={box} class="tooltip" aria-hidden="true" style={{ left: `${place.left}px`, top: `${place.top}px` }} onMouseLeave={onLeave}>
      <strong>{tip.lines[0]}</strong>
      {tip.lines.slice(1).map((line) => (
        <p>{line}</p>
      ))}
    </div>
  )
}
