// Shared by the bench-*.mjs scripts.

/** The p-th percentile (0 < p <= 100) of xs by the nearest-rank method: always one of the samples. */
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)]
}
