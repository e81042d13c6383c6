// Time to first command through the unmodified E2B JS SDK: Sandbox.create() + commands.run('true'),
// timed inside one Node process (Node's own start is not counted), then commands.run('true') again
// in the same sandbox (exec latency). Each sandbox is killed after its runs, outside the timing.
// Usage: E2B_API_URL=... E2B_SANDBOX_URL=... E2B_API_KEY=... node bench-latency.mjs [runs=200]
// BENCH_PAUSE_MS (default 0): pause after each kill, for pools too small to keep up.
// Prints a summary per measure and, last, markdown table rows (`| measure | where | result |`).
import { Sandbox } from 'e2b'
import { pct } from './bench-stats.mjs'

const runs = Number(process.argv[2] ?? 200)
const pauseMs = Number(process.env.BENCH_PAUSE_MS ?? 0)
const warmup = Number(process.env.BENCH_WARMUP ?? 10)
for (const v of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[v]) { console.error(`${v} is not set`); process.exit(2) }
}
if (!(runs >= 1)) { console.error(`runs must be a positive number, got ${process.argv[2]}`); process.exit(2) }

const f = (ms) => ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0)
const fmt = (xs) => `p50/p90/p99/max ${f(pct(xs, 50))} / ${f(pct(xs, 90))} / ${f(pct(xs, 99))} / ${f(Math.max(...xs))} ms (${xs.length} samples)`

async function once(record) {
  let t = performance.now()
  const sbx = await Sandbox.create()
  const created = performance.now() - t
  const r = await sbx.commands.run('true')
  const first = performance.now() - t
  if (r.exitCode !== 0) throw new Error(`'true' exited with ${r.exitCode} in ${sbx.sandboxId}`)
  t = performance.now()
  await sbx.commands.run('true')
  const second = performance.now() - t
  await sbx.kill()
  if (record) { create.push(created); tti.push(first); exec.push(second) }
  if (pauseMs > 0) await new Promise(r => setTimeout(r, pauseMs))
}

const create = [], tti = [], exec = []
// warm-up: JIT on both sides, keep-alive connections in the SDK's pool
for (let i = 0; i < warmup; i++) await once(false)
for (let i = 0; i < runs; i++) {
  await once(true)
  if ((i + 1) % 50 === 0) console.error(`bench-latency: ${i + 1}/${runs}`)
}
console.log(`runs: ${runs} (after ${warmup} warm-up runs)`)
console.log(`Sandbox.create()                        ${fmt(create)}`)
console.log(`create + commands.run('true') (TTI)     ${fmt(tti)}`)
console.log(`commands.run('true') (second)           ${fmt(exec)}`)
console.log(`| time to first command: \`Sandbox.create()\` + \`commands.run('true')\`, E2B JS SDK | hub | ${fmt(tti)} |`)
console.log(`| \`Sandbox.create()\` alone, E2B JS SDK | hub | ${fmt(create)} |`)
console.log(`| exec: \`commands.run('true')\` in a running sandbox, E2B JS SDK | hub | ${fmt(exec)} |`)
