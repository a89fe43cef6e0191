import { InvalidArgumentError } from 'commander'

/** Option parsers: commander reports their errors as usage errors (exit status 1). */
export function integerOption(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    const value = Number(text)
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new InvalidArgumentError(`Expected an integer from ${min} to ${max}.`)
    }
    return value
  }
}

export function positiveNumber(max: number) {
  return (text: string): number => {
    const value = Number(text)
    if (text.trim() === '' || !(value > 0 && value <= max)) {
      throw new InvalidArgumentError(`Expected a number above 0, at most ${max}.`)
    }
    return value
  }
}
