// Create and commands.run('true') latency through the unmodified E2B SDK.
// Usage: E2B_API_URL=... E2B_SANDBOX_URL=... E2B_API_KEY=... node bench-latency.mjs [runs=50]
// Prints median / p90 / max in milliseconds. Each create is followed by a kill, so the warm pool
// refills between runs only as fast as sandboxes start; a short pause keeps the pool from emptying.
import { Sandbox } from 'e2b'

const runs = Number(process.argv[2] ?? 50)
const pauseMs = Number(process.env.BENCH_PAUSE_MS ?? 150)
for (const v of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[v]) { console.error(`${v} is not set`); process.exit(2) }
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)] }
const fmt = (xs) => `median ${pct(xs, 50).toFixed(2)} ms  p90 ${pct(xs, 90).toFixed(2)} ms  max ${Math.max(...xs).toFixed(2)} ms`

// warm-up: JIT on both sides, TCP connections in the SDK's pool
for (let i = 0; i < 3; i++) { const s = await Sandbox.create(); await s.commands.run('true'); await s.kill() }

const create = [], run = [], runWarm = []
for (let i = 0; i < runs; i++) {
  let t = performance.now()
  const sbx = await Sandbox.create()
  create.push(performance.now() - t)
  t = performance.now()
  await sbx.commands.run('true')
  run.push(performance.now() - t)
  t = performance.now()
  await sbx.commands.run('true')
  runWarm.push(performance.now() - t)
  await sbx.kill()
  await new Promise(r => setTimeout(r, pauseMs))
}
console.log(`runs: ${runs}`)
console.log(`Sandbox.create()                     ${fmt(create)}`)
console.log(`commands.run('true') (first)        ${fmt(run)}`)
console.log(`commands.run('true') (second)       ${fmt(runWarm)}`)
