// Snapshots, fork and reset with the unmodified E2B JS SDK against an AgentBox hub: the acceptance
// outline of docs/e2b-wire.md#templates-lifecycle-and-snapshots, items 18–22 and 24 (numbers in the test names), plus
// reset (an AgentBox route, POST /v1/sandboxes/{id}/reset) over plain HTTP.
//
// Needs E2B_API_URL, E2B_SANDBOX_URL (both the hub's public URL) and E2B_API_KEY (e2b_<hex>);
// E2B_SDK_PACKAGE picks the installed SDK ("e2b" = 2.51.0, the default).
// Run: npm ci && node --test e2b-snapshots.test.mjs
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import crypto from 'node:crypto'

for (const name of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[name]) throw new Error(`${name} must be set`)
}
const sdkPackage = process.env.E2B_SDK_PACKAGE ?? 'e2b'
const sdkVersion = createRequire(import.meta.url)(`${sdkPackage}/package.json`).version
console.log(`e2b SDK under test: ${sdkPackage} ${sdkVersion}`)
const { Sandbox, SandboxNotFoundError } = await import(sdkPackage)
const template = process.env.E2B_TEMPLATE ?? 'base'
console.log(`template under test: ${template}`)

const run = crypto.randomBytes(4).toString('hex')
const created = []
let sbx
let snap // the unnamed snapshot of step 18
let named // the named snapshot of step 20

async function create(id, opts = {}) {
  const s = await Sandbox.create(id, { timeoutMs: 300_000, ...opts })
  created.push(s.sandboxId)
  return s
}

async function read(s, path) {
  return (await s.commands.run(`cat ${path}`)).stdout
}

before(async () => {
  sbx = await create(template)
})

after(async () => {
  for (const id of created) await Sandbox.kill(id).catch(() => {})
})

test('18. createSnapshot: an unnamed snapshot; the source keeps running with the same end time', async () => {
  await sbx.files.write('/home/user/s.txt', 'v1')
  await sbx.commands.run('sleep 3600', { background: true })
  const before = await Sandbox.getInfo(sbx.sandboxId)
  snap = await sbx.createSnapshot()
  assert.match(snap.snapshotId, /^[a-z0-9]+:default$/)
  assert.deepEqual(snap.names, [])
  assert.equal(await sbx.isRunning(), true)
  const afterInfo = await Sandbox.getInfo(sbx.sandboxId)
  assert.equal(afterInfo.endAt.getTime(), before.endAt.getTime())
  assert.equal(await read(sbx, '/home/user/s.txt'), 'v1')
  assert.match((await sbx.commands.run('pgrep -x sleep')).stdout, /\d+/)
})

test('19. Sandbox.create(snapshotId) twice: both start from it, independent of each other and the source', async () => {
  const [a, b] = await Promise.all([create(snap.snapshotId), create(snap.snapshotId)])
  assert.notEqual(a.sandboxId, b.sandboxId)
  assert.notEqual(a.sandboxId, sbx.sandboxId)
  assert.equal(await read(a, '/home/user/s.txt'), 'v1')
  assert.equal(await read(b, '/home/user/s.txt'), 'v1')
  // files only: the source's process is not in the copy
  assert.equal((await a.commands.run('pgrep -x sleep || echo none')).stdout.trim(), 'none')
  await a.files.write('/home/user/s.txt', 'changed-in-a')
  assert.equal(await read(b, '/home/user/s.txt'), 'v1')
  assert.equal(await read(sbx, '/home/user/s.txt'), 'v1')
  assert.equal(await read(a, '/home/user/s.txt'), 'changed-in-a')
  // a sandbox from a snapshot names it as E2B does (template id, and the snapshot id as its name),
  // and that name creates from it again
  const info = await Sandbox.getInfo(b.sandboxId)
  assert.equal(info.templateId, snap.snapshotId.split(':')[0])
  assert.equal(info.name, snap.snapshotId)
  const again = await create(info.name)
  assert.equal(await read(again, '/home/user/s.txt'), 'v1')
})

test('20. a named snapshot; listSnapshots by name, by sandbox and in pages', async () => {
  const name = `acc-snap-${run}`
  await sbx.files.write('/home/user/s.txt', 'v2')
  named = await sbx.createSnapshot({ name })
  assert.ok(named.names.some((n) => n.includes(name)), JSON.stringify(named))
  assert.match(named.snapshotId, new RegExp(`^[a-z0-9._-]+/${name}:default$`))

  const byName = await Sandbox.listSnapshots({ name }).nextItems()
  assert.deepEqual(byName.map((s) => s.snapshotId), [named.snapshotId])
  assert.deepEqual(await Sandbox.listSnapshots({ name: `nope-${run}` }).nextItems(), [])
  const mine = await sbx.listSnapshots().nextItems()
  assert.deepEqual(mine.map((s) => s.snapshotId), [named.snapshotId, snap.snapshotId], 'newest first')

  const pages = Sandbox.listSnapshots({ sandboxId: sbx.sandboxId, limit: 1 })
  const first = await pages.nextItems()
  assert.equal(first.length, 1)
  assert.equal(pages.hasNext, true)
  const second = await pages.nextItems()
  assert.deepEqual([...first, ...second].map((s) => s.snapshotId), [named.snapshotId, snap.snapshotId])
  if (pages.hasNext) assert.deepEqual(await pages.nextItems(), [])
  assert.equal(pages.hasNext, false)

  const fromNamed = await create(named.snapshotId)
  assert.equal(await read(fromNamed, '/home/user/s.txt'), 'v2')
})

test('24. fork({count: 2}): two running sandboxes with the source\'s files; the source unchanged', async () => {
  await sbx.files.write('/home/user/fork.txt', 'forked')
  const forks = await sbx.fork({ count: 2, timeoutMs: 120_000 })
  assert.equal(forks.length, 2)
  for (const f of forks) {
    assert.ok(!(f instanceof Error), String(f))
    created.push(f.sandboxId)
    assert.notEqual(f.sandboxId, sbx.sandboxId)
    assert.equal(await f.isRunning(), true)
    assert.equal(await read(f, '/home/user/fork.txt'), 'forked')
  }
  await forks[0].files.write('/home/user/fork.txt', 'mine')
  assert.equal(await read(forks[1], '/home/user/fork.txt'), 'forked')
  assert.equal(await read(sbx, '/home/user/fork.txt'), 'forked')
  await assert.rejects(Sandbox.fork('nope', { count: 1 }), SandboxNotFoundError)
})

test('21. the snapshot outlives its source', async () => {
  const source = await create(template)
  await source.files.write('/home/user/gone.txt', 'kept')
  const s = await source.createSnapshot()
  await source.kill()
  const after = await create(s.snapshotId)
  assert.equal(await read(after, '/home/user/gone.txt'), 'kept')
  assert.equal(await Sandbox.deleteSnapshot(s.snapshotId), true)
})

test('22. deleteSnapshot: true, then false; plain and namespaced ids; a create from it then fails', async () => {
  const fromSnap = await create(snap.snapshotId)
  for (const s of [snap, named]) {
    assert.equal(await Sandbox.deleteSnapshot(s.snapshotId), true)
    assert.equal(await Sandbox.deleteSnapshot(s.snapshotId), false)
    await assert.rejects(Sandbox.create(s.snapshotId, { timeoutMs: 60_000 }))
  }
  assert.deepEqual(await sbx.listSnapshots().nextItems(), [])
  // sandboxes already started from a deleted snapshot keep running, with its files
  assert.equal(await fromSnap.isRunning(), true)
  assert.equal(await read(fromSnap, '/home/user/s.txt'), 'v1')
  await assert.rejects(Sandbox.createSnapshot('nope'), SandboxNotFoundError)
})

test('reset over HTTP: fresh files and processes, same id and access token', async () => {
  const api = process.env.E2B_API_URL
  const headers = { 'X-API-Key': process.env.E2B_API_KEY, 'Content-Type': 'application/json' }
  const s = await create(template)
  const info = await Sandbox.getInfo(s.sandboxId)
  await s.files.write('/home/user/episode.txt', 'dirty')
  await s.commands.run('sleep 3600', { background: true })
  for (let round = 0; round < 3; round++) {
    const r = await fetch(`${api}/v1/sandboxes/${s.sandboxId}/reset`, { method: 'POST', headers, body: '{}' })
    assert.equal(r.status, 200, await r.clone().text())
    const body = await r.json()
    assert.equal(body.id, s.sandboxId) // the native API's Sandbox (docs/native-api.md)
    assert.ok(s.envdAccessToken, 'the create gave an access token')
    assert.equal(body.envdAccessToken, s.envdAccessToken)
    // the same SDK object keeps working: same id, same token
    assert.equal((await s.commands.run('test -e /home/user/episode.txt || echo clean')).stdout.trim(), 'clean')
    assert.equal((await s.commands.run('pgrep -x sleep || echo none')).stdout.trim(), 'none')
    await s.files.write('/home/user/episode.txt', `round ${round}`)
  }
  assert.equal((await Sandbox.getInfo(s.sandboxId)).endAt.getTime(), info.endAt.getTime())
  const missing = await fetch(`${api}/v1/sandboxes/nope/reset`, { method: 'POST', headers, body: '{}' })
  assert.equal(missing.status, 404)
  assert.equal((await missing.json()).error.code, 'not_found') // the native API's error envelope
})
