import { useEffect, useState } from 'preact/hooks'
import { customWindowProblem, fromInput, PRESETS, toInput, type PresetId, type WindowChoice } from './time-window.js'

interface WindowPickerProps {
  choice: WindowChoice
  onChoose: (choice: WindowChoice) => void
  onReload: () => void
}

const DAY = 86_400_000

/** A span ending now, or fixed bounds in UTC; changing the span applies at once, bounds on Apply. */
export function WindowPicker({ choice, onChoose, onReload }: WindowPickerProps) {
  const [custom, setCustom] = useState(!('preset' in choice))
  const [from, setFrom] = useState(() => toInput('preset' in choice ? Date.now() - DAY : choice.start))
  const [to, setTo] = useState(() => toInput('preset' in choice ? Date.now() : choice.end))
  const [problem, setProblem] = useState<string | undefined>()
  // A window chosen elsewhere (a link, Back or Forward) shows here as if picked.
  useEffect(() => {
    setCustom(!('preset' in choice))
    setProblem(undefined)
    if ('preset' in choice) return
    setFrom(toInput(choice.start))
    setTo(toInput(choice.end))
  }, [choice])

  const pick = (value: string) => {
    if (value === 'custom') return setCustom(true)
    setCustom(false)
    setProblem(undefined)
    onChoose({ preset: value as PresetId })
  }
  const apply = (event: Event) => {
    event.preventDefault()
    const start = fromInput(from)
    const end = fromInput(to)
    const wrong = customWindowProblem(start, end)
    setProblem(wrong)
    if (wrong === undefined) onChoose({ start: start!, end: end! })
  }

  return (
    <form class="window-picker" method="post" onSubmit={apply}>
      <label for="window">Window</label>
      <select id="window" value={custom ? 'custom' : 'preset' in choice ? choice.preset : 'custom'} onChange={(e) => pick(e.currentTarget.value)}>
        {PRESETS.map((preset) => (
          <option value={preset.id}>{preset.label}</option>
        ))}
        <option value="custom">Between two times…</option>
      </select>
      {custom && (
        <>
          <label for="from">From (UTC)</label>
          <input id="from" class="bound" placeholder="YYYY-MM-DD HH:MM" spellcheck={false} value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
          <label for="to">To (UTC)</label>
          <input id="to" class="bound" placeholder="YYYY-MM-DD HH:MM" spellcheck={false} value={to} onInput={(e) => setTo(e.currentTarget.value)} />
          <button type="submit">Apply</button>
        </>
      )}
      <button type="button" onClick={onReload}>
        Reload
      </button>
      {problem !== undefined && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </form>
  )
}
