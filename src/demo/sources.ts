import { logUniform, round2, weightedPicker, type Random } from './random.js'

/** A known_source_name as the real-time pipeline reports it, and how its events look. */
export interface DemoSource {
  name: string
  /** Share of all events. */
  weight: number
  /** Chance that an event of this source triggers a baseband dump. */
  baseband: number
  /** The dispersion measure of the event (pc cm^-3). */
  dm: (random: Random) => number
}

/** A pulsar's catalogue DM with the scatter of a real-time estimate. */
const pulsar = (name: string, weight: number, dm: number): DemoSource => ({
  name,
  weight,
  // Known pulsars rarely trigger baseband; the pipeline keeps it for unknown sources.
  baseband: 0.06,
  dm: (random) => round2(dm + (random() + random() - 1) * 0.6)
})

const category = (name: string, weight: number, baseband: number, dmLow: number, dmHigh: number): DemoSource => ({
  name,
  weight,
  baseband,
  dm: (random) => round2(logUniform(random, dmLow, dmHigh))
})

/** Weights add up to 1: about a third extragalactic, a third known pulsars (B0329+54 the most). */
export const DEMO_SOURCES: readonly DemoSource[] = [
  category('EXT', 0.33, 0.3, 100, 3000),
  category('AMB', 0.2, 0.22, 30, 800),
  category('GAL', 0.15, 0.18, 3, 300),
  pulsar('B0329+54', 0.09, 26.76),
  pulsar('B0531+21', 0.06, 56.77),
  pulsar('B1933+16', 0.04, 158.52),
  pulsar('B2016+28', 0.03, 14.18),
  pulsar('B0950+08', 0.025, 2.97),
  pulsar('B1133+16', 0.025, 4.84),
  pulsar('B2217+47', 0.02, 43.52),
  pulsar('B0355+54', 0.015, 57.14),
  pulsar('B1508+55', 0.01, 19.61),
  pulsar('J0437-4715', 0.005, 2.64)
]

export const pickSource = weightedPicker(DEMO_SOURCES)

const CLASSIFICATIONS = [
  { name: 'astrophysical', weight: 0.7 },
  { name: 'rfi', weight: 0.2 },
  { name: 'ambiguous', weight: 0.1 }
] as const
export const pickClassification = weightedPicker(CLASSIFICATIONS)
