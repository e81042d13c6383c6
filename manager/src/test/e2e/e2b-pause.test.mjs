// Pause, resume (connect), the create-time lifecycle and metrics with the unmodified E2B JS SDK
// against an AgentBox hub: items 10–17 and 23 of the acceptance outline of
// docs/e2b-wire.md#templates-lifecycle-and-snapshots, plus repeated pause/connect with files and a background process
// (docs/e2b-wire.md#known-field-problems). Runs once per SDK generation: E2B_SDK_PACKAGE=e2b (2.51.0: POST /v2/sandboxes/{id}/connect,
// pause body {}) and e2b-2-50 (2.50.0: POST /sandboxes/{id}/connect with {"timeout":300}, pause
// body {"memory":true}); a request log (every fetch the SDK makes) checks those wire details.
//
// Needs E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY; E2B_TEMPLATE (default base).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import http from 'node:http'

for (const name of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[name]) throw new Error(`${name} must be set`)
}
if (process.env.E2B_DEBUG) throw new Error('E2B_DEBUG must not be set (it bypasses the control plane)')

// the request log: method, path, query, body and status of every control-plane request the SDK
// makes, in order. The SDK fetches through its own undici dispatcher (not globalThis.fetch), so
// the log is a small forwarding proxy in front of the hub that the SDK is pointed at.
const hubUrl = new URL(process.env.E2B_API_URL)
const wire = []
const proxy = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks)
    const headers = { ...req.headers, host: hubUrl.host }
    delete headers['transfer-encoding']
    headers['content-length'] = String(body.length)
    const up = http.request({ host: hubUrl.hostname, port: hubUrl.port, method: req.method, path: req.url, headers }, (r) => {
      const url = new URL(req.url, hubUrl)
      wire.push({ method: req.method, path: url.pathname, query: url.search, body: body.toString(), status: r.statusCode })
      res.writeHead(r.statusCode, r.headers)
      r.pipe(res)
    })
    up.on('error', (e) => { res.writeHead(599); res.end(String(e)) })
    up.end(body)
  })
})
await new Promise((r) => proxy.listen(0, '127.0.0.1', r))
process.env.E2B_API_URL = `http://127.0.0.1:${proxy.address().port}`

const sdkPackage = process.env.E2B_SDK_PACKAGE ?? 'e2b'
const sdkVersion = createRequire(import.meta.url)(`${sdkPackage}/package.json`).version
const v250 = sdkPackage === 'e2b-2-50'
console.log(`e2b SDK under test: ${sdkPackage} ${sdkVersion}`)
const { Sandbox, SandboxNotFoundError } = await import(sdkPackage)
const template = process.env.E2B_TEMPLATE ?? 'base'
console.log(`template under test: ${template}`)

const created = []
async function create(opts = {}) {
  const s = await Sandbox.create(template, { timeoutMs: 120_000, ...opts })
  created.push(s.sandboxId)
  return s
}

after(async () => {
  for (const id of created) await Sandbox.kill(id).catch(() => {})
  proxy.close()
})

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function eventually(what, check, attempts = 100, pauseMs = 200) {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return
    await sleep(pauseMs)
  }
  assert.fail(`${what}: not true after ${attempts} attempts`)
}

/** A control-plane call by hand (for statuses the SDK hides). */
async function control(method, path, body) {
  const res = await fetch(new URL(path, hubUrl), {
    method,
    headers: { 'X-API-Key': process.env.E2B_API_KEY, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, json: text ? JSON.parse(text) : null }
}

/** The SDK's connect request of this generation, as the request log saw it. */
function lastConnect(id) {
  const path = v250 ? `/sandboxes/${id}/connect` : `/v2/sandboxes/${id}/connect`
  const hits = wire.filter((w) => w.method === 'POST' && w.path === path)
  assert.ok(hits.length > 0, `the SDK called POST ${path} (log: ${JSON.stringify(wire.slice(-5))})`)
  return hits[hits.length - 1]
}

function lastPause(id) {
  const hits = wire.filter((w) => w.method === 'POST' && w.path === `/sandboxes/${id}/pause`)
  assert.ok(hits.length > 0, `the SDK called POST /sandboxes/${id}/pause`)
  return hits[hits.length - 1]
}

test('10. pause: true, then not running, a second pause false, unknown id not found, state paused in getInfo and list', async () => {
  const sbx = await create()
  assert.equal(await sbx.isRunning(), true)
  assert.equal(await sbx.pause(), true)
  assert.equal(lastPause(sbx.sandboxId).status, 204)
  assert.deepEqual(JSON.parse(lastPause(sbx.sandboxId).body || '{}'), v250 ? { memory: true } : {})
  assert.equal(await sbx.isRunning(), false, 'envd of a paused sandbox answers 502')
  assert.equal(await sbx.pause(), false, 'already paused: 409')
  assert.equal(lastPause(sbx.sandboxId).status, 409)
  await assert.rejects(Sandbox.pause('nope'), SandboxNotFoundError)
  const info = await Sandbox.getInfo(sbx.sandboxId)
  assert.equal(info.state, 'paused')
  const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems()
  assert.ok(paused.some((s) => s.sandboxId === sbx.sandboxId), 'listed with state paused')
  assert.ok(paused.every((s) => s.state === 'paused'))
  const running = await Sandbox.list({ query: { state: ['running'] } }).nextItems()
  assert.ok(!running.some((s) => s.sandboxId === sbx.sandboxId), 'not among the running')
  // commands and files fail at once (502, as for a killed sandbox), they do not hang
  const t0 = Date.now()
  await assert.rejects(sbx.commands.run('true'))
  await assert.rejects(sbx.files.read('/etc/hostname'))
  assert.ok(Date.now() - t0 < 10_000, `refusals took ${Date.now() - t0} ms`)
  // a paused sandbox has no timeout to set: 404 as E2B (docs/e2b-wire.md#pause)
  const timeout = await control('POST', `/sandboxes/${sbx.sandboxId}/timeout`, { timeout: 60 })
  assert.equal(timeout.status, 404)
  assert.equal(timeout.json.code, 404)
  await assert.rejects(sbx.setTimeout(60_000))
})

test('11. Sandbox.connect resumes it: same id, running, files and create-time envs kept, 201 then 200 on the wire', async () => {
  const sbx = await create({ envs: { SBX_ENV: 'from-create' } })
  await sbx.files.write('/home/user/before.txt', 'written before the pause')
  await sbx.pause()
  const again = await Sandbox.connect(sbx.sandboxId)
  assert.equal(again.sandboxId, sbx.sandboxId)
  assert.equal(lastConnect(sbx.sandboxId).status, 201, 'paused → resumed: 201')
  if (v250) assert.deepEqual(JSON.parse(lastConnect(sbx.sandboxId).body), { timeout: 300 })
  assert.equal(await again.isRunning(), true)
  assert.equal(await again.files.read('/home/user/before.txt'), 'written before the pause')
  assert.equal((await again.commands.run('echo $SBX_ENV')).stdout, 'from-create\n')
  await Sandbox.connect(sbx.sandboxId)
  assert.equal(lastConnect(sbx.sandboxId).status, 200, 'running: 200')
  // the TTL after a resume is now + timeout (default 300 s)
  const endAt = (await Sandbox.getInfo(sbx.sandboxId)).endAt.getTime()
  assert.ok(endAt > Date.now() + 250_000 && endAt <= Date.now() + 301_000, `endAt ${new Date(endAt).toISOString()}`)
})

test('12. instance path: pause, connect, then commands work with the token the instance already had', async () => {
  const sbx = await create()
  await sbx.pause()
  const token = (await control('GET', `/sandboxes/${sbx.sandboxId}`)).json.envdAccessToken
  await sbx.connect()
  assert.equal((await control('GET', `/sandboxes/${sbx.sandboxId}`)).json.envdAccessToken, token, 'same envdAccessToken')
  assert.equal((await sbx.commands.run('echo x')).stdout, 'x\n')
})

test('13. memory: a background process keeps its pid across pause/connect; keepMemory:false keeps files and drops processes', async () => {
  const sbx = await create()
  const bg = await sbx.commands.run('sleep 3600', { background: true })
  await sbx.pause()
  await sbx.connect()
  const listed = await sbx.commands.list()
  assert.ok(listed.some((p) => p.pid === bg.pid), `pid ${bg.pid} still listed: ${JSON.stringify(listed.map((p) => p.pid))}`)
  const attached = await sbx.commands.connect(bg.pid)
  assert.equal(attached.pid, bg.pid)
  await attached.disconnect()

  await sbx.files.write('/home/user/kept.txt', 'kept')
  assert.equal(await sbx.pause({ keepMemory: false }), true)
  assert.deepEqual(JSON.parse(lastPause(sbx.sandboxId).body), { memory: false })
  await sbx.connect()
  assert.equal(await sbx.files.read('/home/user/kept.txt'), 'kept')
  const after = await sbx.commands.list()
  assert.ok(!after.some((p) => p.pid === bg.pid), 'the process is gone after a pause without memory')
})

test('14. three rounds of pause/connect: every file change and the background process survive (same pid)', async () => {
  const sbx = await create()
  const counter = await sbx.commands.run(
    "sh -c 'i=0; while :; do i=$((i+1)); echo $i > /home/user/count; sleep 0.1; done'", { background: true })
  for (let round = 1; round <= 3; round++) {
    await sbx.files.write(`/home/user/round-${round}.txt`, `round ${round}`)
    await sbx.files.write('/home/user/changed.txt', `changed in round ${round}`)
    assert.equal(await sbx.pause(), true)
    assert.equal(await sbx.isRunning(), false)
    if (round % 2) await sbx.connect()
    else await Sandbox.connect(sbx.sandboxId)
    assert.equal(await sbx.isRunning(), true)
    for (let r = 1; r <= round; r++) {
      assert.equal(await sbx.files.read(`/home/user/round-${r}.txt`), `round ${r}`)
    }
    assert.equal(await sbx.files.read('/home/user/changed.txt'), `changed in round ${round}`)
    assert.ok((await sbx.commands.list()).some((p) => p.pid === counter.pid), `round ${round}: counter pid ${counter.pid}`)
    const before = Number(await sbx.files.read('/home/user/count'))
    await eventually(`round ${round}: the counter goes on`, async () => Number(await sbx.files.read('/home/user/count')) > before + 3)
  }
})

test('15. connect to an unknown id is not found; a paused sandbox can be killed, and is then not found', async () => {
  await assert.rejects(Sandbox.connect('nope'), SandboxNotFoundError)
  const sbx = await create()
  await sbx.pause()
  assert.equal(await Sandbox.kill(sbx.sandboxId), true)
  await assert.rejects(Sandbox.connect(sbx.sandboxId), SandboxNotFoundError)
})

test('16. lifecycle: at its timeout a sandbox with onTimeout pause is paused, not killed; autoResume wakes it on traffic', async () => {
  const [plain, auto] = await Promise.all([
    create({ timeoutMs: 5_000, lifecycle: { onTimeout: 'pause' } }),
    create({ timeoutMs: 5_000, lifecycle: { onTimeout: 'pause', autoResume: true } }),
  ])
  const create1 = wire.find((w) => w.method === 'POST' && /sandboxes$/.test(w.path) && w.body.includes('"autoResume"'))
  assert.ok(create1, 'the create carried the lifecycle')
  assert.equal(JSON.parse(create1.body).autoPause, true)
  assert.deepEqual(JSON.parse(create1.body).autoResume, { enabled: true })
  assert.deepEqual((await Sandbox.getInfo(plain.sandboxId)).lifecycle, { onTimeout: 'pause', autoResume: false })
  assert.deepEqual((await Sandbox.getInfo(auto.sandboxId)).lifecycle, { onTimeout: 'pause', autoResume: true })
  await plain.files.write('/home/user/f.txt', 'before the timeout')
  for (const s of [plain, auto]) {
    await eventually(`${s.sandboxId} paused at its timeout`, async () => (await Sandbox.getInfo(s.sandboxId)).state === 'paused', 60, 250)
  }
  await sleep(1500) // past its end: still paused, not reaped
  assert.equal((await Sandbox.getInfo(plain.sandboxId)).state, 'paused')
  assert.equal(await plain.isRunning(), false, 'without autoResume, traffic does not wake it')
  await plain.connect({ timeoutMs: 60_000 })
  assert.equal(await plain.files.read('/home/user/f.txt'), 'before the timeout')
  assert.deepEqual((await Sandbox.getInfo(plain.sandboxId)).lifecycle, { onTimeout: 'pause', autoResume: false },
    'the lifecycle survives a resume')

  assert.equal((await Sandbox.getInfo(auto.sandboxId)).state, 'paused')
  assert.equal(await auto.isRunning(), true, 'with autoResume, /health resumes it')
  assert.equal((await Sandbox.getInfo(auto.sandboxId)).state, 'running')
  assert.equal((await auto.commands.run('echo awake')).stdout, 'awake\n')
})

test('17. the wire of this SDK generation: connect path and body, pause body', async () => {
  const sbx = await create()
  await Sandbox.pause(sbx.sandboxId)
  assert.deepEqual(JSON.parse(lastPause(sbx.sandboxId).body || '{}'), v250 ? { memory: true } : {})
  await Sandbox.connect(sbx.sandboxId)
  const c = lastConnect(sbx.sandboxId)
  assert.equal(c.status, 201)
  assert.deepEqual(JSON.parse(c.body || '{}'), v250 ? { timeout: 300 } : {})
  // the deprecated resume: optional body, 201; on a running sandbox 409
  const paused = await control('POST', `/sandboxes/${sbx.sandboxId}/pause`)
  assert.equal(paused.status, 204)
  const resumed = await control('POST', `/sandboxes/${sbx.sandboxId}/resume`)
  assert.equal(resumed.status, 201)
  assert.equal(resumed.json.sandboxID, sbx.sandboxId)
  assert.equal((await control('POST', `/sandboxes/${sbx.sandboxId}/resume`, {})).status, 409)
})

test('23. metrics: samples within seconds, every field, ranges in seconds, [] before the sandbox, unknown id not found', async () => {
  const sbx = await create()
  const createdAt = Date.now()
  let metrics = []
  await eventually('first metrics sample', async () => (metrics = await sbx.getMetrics()).length > 0, 60, 500)
  assert.ok(Date.now() - createdAt < 10_000, `first sample after ${Date.now() - createdAt} ms`)
  for (const m of metrics) {
    assert.ok(m.timestamp instanceof Date && !Number.isNaN(m.timestamp.getTime()))
    for (const f of ['cpuUsedPct', 'cpuCount', 'memUsed', 'memTotal', 'memCache', 'diskUsed', 'diskTotal']) {
      assert.equal(typeof m[f], 'number', f)
    }
    assert.ok(m.cpuCount >= 1)
    assert.ok(m.cpuUsedPct >= 0 && m.cpuUsedPct <= 100)
    assert.ok(m.memUsed > 0 && m.memUsed <= m.memTotal, `memUsed ${m.memUsed} memTotal ${m.memTotal}`)
    assert.ok(m.diskUsed >= 0 && m.diskUsed <= m.diskTotal && m.diskTotal > 0)
  }
  const raw = await control('GET', `/sandboxes/${sbx.sandboxId}/metrics`)
  assert.equal(raw.status, 200)
  assert.equal(typeof raw.json[0].timestampUnix, 'number', 'timestampUnix is sent (Python requires it)')
  assert.match(raw.json[0].timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)

  const start = new Date(createdAt - 5_000)
  const end = new Date()
  const ranged = await sbx.getMetrics({ start, end })
  assert.ok(ranged.length > 0)
  for (const m of ranged) {
    assert.ok(m.timestamp.getTime() >= start.getTime() - 10_000 && m.timestamp.getTime() <= end.getTime() + 10_000)
  }
  const q = wire.filter((w) => w.path === `/sandboxes/${sbx.sandboxId}/metrics`).pop()
  assert.match(q.query, /start=\d{10}&end=\d{10}/, 'start and end in Unix seconds')
  assert.deepEqual(await sbx.getMetrics({ start: new Date(createdAt - 3_600_000), end: new Date(createdAt - 3_000_000) }), [])
  await assert.rejects(Sandbox.getMetrics('nope'), SandboxNotFoundError)
})
