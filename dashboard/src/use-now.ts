import { useEffect, useState } from 'preact/hooks'

/** The clock, read again every second while `ticking`: for texts that count time (a countdown, an age). */
export function useNow(ticking: boolean): number {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    if (!ticking) return
    setNow(Date.now())
    const tick = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(tick)
  }, [ticking])
  return now
}
