// Where the time of a `commands.run('true')` goes on the client side, measured in one run with the
// variants interleaved (one call of each in turn), so that a shared machine's drift hits all alike:
//   sdk     commands.run('true') through the unmodified E2B JS SDK, in one long-lived sandbox
//   fetch   the same Connect request (process.Process/Start, JSON envelope) with Node's fetch
//   http    the same request with node:http and a keep-alive agent (no fetch machinery)
// and, in blocks between them, the flow bench-latency.mjs times: the second commands.run('true')
// in a sandbox created just before (its first command run, a previous sandbox just killed).
// Usage: E2B_API_URL=... E2B_SANDBOX_URL=... E2B_API_KEY=... node bench-exec-paths.mjs [rounds=300]
import { Sandbox } from 'e2b'
import { pct } from './bench-stats.mjs'
import http from 'node:http'

const rounds = Number(process.argv[2] ?? 300)
for (const v of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[v]) { console.error(`${v} is not set`); process.exit(2) }
}
if (!(rounds >= 10)) { console.error(`rounds must be at least 10, got ${process.argv[2]}`); process.exit(2) }

const f = (ms) => ms.toFixed(2)

const sbx = await Sandbox.create()
const base = new URL(process.env.E2B_SANDBOX_URL)
// Connect's enveloped JSON: 1 flag byte, 4 length bytes (big endian), then the message
const message = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-l', '-c', 'true'] }, stdin: false }))
const body = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message])
body.writeUInt32BE(message.length, 1)
const headers = {
  'Content-Type': 'application/connect+json', 'Connect-Protocol-Version': '1',
  'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983',
  ...(sbx.envdAccessToken ? { 'X-Access-Token': sbx.envdAccessToken } : {}),
}
const agent = new http.Agent({ keepAlive: true })
// a Start stream that went through has the process's end event; an error stream has none
const checkEnd = (buf) => {
  if (!buf.includes('"end"')) {
    throw new Error(`no end event in the Start stream: ${buf.toString().slice(0, 300)}`)
  }
}
const viaHttp = () => new Promise((resolve, reject) => {
  const req = http.request({ host: base.hostname, port: base.port, path: '/process.Process/Start', method: 'POST', headers, agent }, (res) => {
    const chunks = []
    res.on('data', (c) => chunks.push(c))
    res.on('end', () => { try { checkEnd(Buffer.concat(chunks)); resolve() } catch (e) { reject(e) } })
  })
  req.on('error', reject)
  req.end(body)
})
const viaFetch = async () => {
  const res = await fetch(new URL('/process.Process/Start', base), { method: 'POST', headers, body })
  checkEnd(Buffer.from(await res.arrayBuffer()))
}
const viaSdk = async () => {
  const r = await sbx.commands.run('true')
  if (r.exitCode !== 0) throw new Error(`'true' exited with ${r.exitCode}`)
}
const variants = { sdk: viaSdk, fetch: viaFetch, http: viaHttp }
const times = { sdk: [], fetch: [], http: [], fresh: [] }

async function freshSecond() {
  const s = await Sandbox.create()
  await s.commands.run('true')
  const t = performance.now()
  await s.commands.run('true')
  const ms = performance.now() - t
  await s.kill()
  return ms
}

for (let i = 0; i < 20; i++) for (const run of Object.values(variants)) await run() // warm-up
for (let i = 0; i < 5; i++) await freshSecond()
for (let i = 0; i < rounds; i++) {
  for (const [name, run] of Object.entries(variants)) {
    const t = performance.now()
    await run()
    times[name].push(performance.now() - t)
  }
  if (i % 3 === 0) times.fresh.push(await freshSecond())
  if ((i + 1) % 100 === 0) console.error(`bench-exec-paths: ${i + 1}/${rounds}`)
}
await sbx.kill()

const line = (name, what) => `| ${what} | p50 / p90 ${f(pct(times[name], 50))} / ${f(pct(times[name], 90))} ms (${times[name].length}) |`
console.log(`rounds: ${rounds} (each: one call of every variant in turn; a fresh-sandbox second command every third round)`)
console.log(line('sdk', "`commands.run('true')`, E2B JS SDK, long-lived sandbox"))
console.log(line('fetch', 'the same Connect request with Node\'s fetch'))
console.log(line('http', 'the same Connect request with node:http (keep-alive)'))
console.log(line('fresh', "second `commands.run('true')` in a sandbox just created (bench-latency's flow)"))
console.log(`SDK over node:http: ${f(pct(times.sdk, 50) - pct(times.http, 50))} ms at p50; fresh sandbox over long-lived: ${f(pct(times.fresh, 50) - pct(times.sdk, 50))} ms`)
