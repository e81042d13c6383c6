// Template.build through the unmodified E2B JS SDK: fromTemplate('base') + three RUN + one COPY
// (issue 14's benchmark shape), from the call to the resolved promise, which the hub answers only
// once the built template serves sandboxes (docs/e2b-wire.md#build-status-and-logs). Every run builds a
// new template with new file content and new commands, so nothing comes from the build cache.
// Usage: E2B_API_URL=... E2B_SANDBOX_URL=... E2B_API_KEY=... node bench-build.mjs [runs=10]
// Prints a summary and, last, a markdown table row (`| measure | where | result |`).
import { Template } from 'e2b'
import { pct } from './bench-stats.mjs'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import crypto from 'node:crypto'

const runs = Number(process.argv[2] ?? 10)
for (const v of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[v]) { console.error(`${v} is not set`); process.exit(2) }
}
if (!(runs >= 1)) { console.error(`runs must be a positive number, got ${process.argv[2]}`); process.exit(2) }

const f = (ms) => (ms / 1000).toFixed(2)
const id = crypto.randomBytes(3).toString('hex')
const times = []
const logs = []
for (let i = 0; i < runs; i++) {
  const ctx = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-build-'))
  fs.writeFileSync(path.join(ctx, 'app.txt'), `run ${id}-${i}\n`.repeat(100))
  const t = Template({ fileContextPath: ctx }).fromTemplate('base')
    .runCmd(`echo one-${i} > /home/user/one.txt`)
    .copy('app.txt', '/home/user/app/app.txt')
    .runCmd(`echo two-${i} >> /home/user/app/app.txt`)
    .runCmd(`test -s /home/user/app/app.txt && echo three-${i}`)
  const start = performance.now()
  try {
    await Template.build(t, `bench-build-${id}-${i}`, { onBuildLogs: (l) => logs.push(String(l?.message ?? l)) })
  } catch (e) {
    // say why: the SDK's BuildError can carry an empty message, the build's log lines say more
    console.error(`bench-build: build ${i + 1} failed: ${e?.name}: ${JSON.stringify(e?.message)}`)
    for (const l of logs.slice(-20)) console.error(`bench-build:   log: ${l}`)
    process.exit(1)
  }
  logs.length = 0
  times.push(performance.now() - start)
  fs.rmSync(ctx, { recursive: true, force: true })
  console.error(`bench-build: ${i + 1}/${runs} ${f(times[i])} s`)
}
const summary = `p50/max ${f(pct(times, 50))} / ${f(Math.max(...times))} s (${runs} builds, uncached)`
console.log(`Template.build (base + 3 RUN + 1 COPY)   ${summary}`)
console.log(`| \`Template.build\`: fromTemplate('base') + 3 RUN + 1 COPY until ready, E2B JS SDK | hub | ${summary} |`)
