// End-to-end test of an AgentBox hub with the unmodified E2B JS SDK (e2b-protocol.md §8).
//
// Needs E2B_API_URL, E2B_SANDBOX_URL (both the hub's public URL) and E2B_API_KEY (e2b_<hex>).
// Run: npm ci && node --test e2b-sdk.test.mjs
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import {
  Sandbox,
  CommandExitError,
  AuthenticationError,
  SandboxNotFoundError,
  TimeoutError,
} from 'e2b'

for (const name of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[name]) throw new Error(`${name} must be set`)
}
if (process.env.E2B_DEBUG) throw new Error('E2B_DEBUG must not be set (it bypasses the control plane)')

let sbx

before(async () => {
  sbx = await Sandbox.create('base', {
    timeoutMs: 120_000,
    envs: { SBX_ENV: 'from-create' },
    metadata: { suite: 'e2b-sdk' },
  })
})

after(async () => {
  if (sbx) await Sandbox.kill(sbx.sandboxId).catch(() => {})
})

test('create returns a running sandbox', async () => {
  assert.match(sbx.sandboxId, /^[a-z0-9-]+$/)
  assert.equal(await sbx.isRunning(), true)
  const info = await sbx.getInfo()
  assert.equal(info.sandboxId, sbx.sandboxId)
  assert.equal(info.state, 'running')
  assert.equal(info.metadata.suite, 'e2b-sdk')
})

test('commands.run: stdout, stderr, envs and cwd', async () => {
  const out = []
  const err = []
  const res = await sbx.commands.run('echo hello; echo oops >&2; echo "$SBX_ENV $CMD_ENV"; pwd', {
    envs: { CMD_ENV: 'per-cmd' },
    cwd: '/tmp',
    onStdout: (d) => out.push(d),
    onStderr: (d) => err.push(d),
  })
  assert.equal(res.exitCode, 0)
  assert.equal(res.stdout, 'hello\nfrom-create per-cmd\n/tmp\n')
  assert.equal(res.stderr, 'oops\n')
  assert.equal(out.join(''), res.stdout)
  assert.equal(err.join(''), res.stderr)
})

test('non-zero exit raises CommandExitError with the exit code', async () => {
  await assert.rejects(sbx.commands.run('echo partial; exit 3'), (e) => {
    assert.ok(e instanceof CommandExitError, `expected CommandExitError, got ${e}`)
    assert.equal(e.exitCode, 3)
    assert.equal(e.stdout, 'partial\n')
    return true
  })
})

test('background command output arrives while it runs', async () => {
  const ticks = []
  const handle = await sbx.commands.run('for i in 1 2 3; do echo tick $i; sleep 0.7; done', {
    background: true,
    onStdout: (d) => ticks.push({ d, at: Date.now() }),
  })
  assert.ok(handle.pid > 0)
  const listed = await sbx.commands.list()
  assert.ok(listed.some((p) => p.pid === handle.pid), 'running process is listed')
  const res = await handle.wait()
  const endedAt = Date.now()
  assert.equal(res.stdout, 'tick 1\ntick 2\ntick 3\n')
  assert.ok(ticks.length >= 2, `output came in ${ticks.length} callback(s)`)
  assert.ok(endedAt - ticks[0].at > 1000, 'first tick arrived well before the command ended')
})

test('killing a background command', async () => {
  const handle = await sbx.commands.run('sleep 30', { background: true })
  assert.equal(await handle.kill(), true)
  await assert.rejects(handle.wait(), (e) => e instanceof CommandExitError && e.exitCode === -1)
  assert.equal(await sbx.commands.kill(999999), false)
})

test('files: write, read, list, exists, makeDir, rename, remove', async () => {
  const info = await sbx.files.write('/home/user/d/a.txt', 'hi')
  assert.equal(info.path, '/home/user/d/a.txt')
  assert.equal(await sbx.files.read('/home/user/d/a.txt'), 'hi')
  const many = await sbx.files.write([
    { path: '/home/user/d/b.txt', data: 'bee' },
    { path: '/home/user/d/c.txt', data: 'sea' },
  ])
  assert.deepEqual(many.map((w) => w.path), ['/home/user/d/b.txt', '/home/user/d/c.txt'])
  const names = (await sbx.files.list('/home/user/d')).map((e) => e.name).sort()
  assert.deepEqual(names, ['a.txt', 'b.txt', 'c.txt'])
  assert.equal(await sbx.files.exists('/home/user/d/a.txt'), true)
  assert.equal(await sbx.files.exists('/home/user/d/none.txt'), false)
  assert.equal(await sbx.files.makeDir('/home/user/d/sub'), true)
  assert.equal(await sbx.files.makeDir('/home/user/d/sub'), false)
  const moved = await sbx.files.rename('/home/user/d/a.txt', '/home/user/d/sub/a2.txt')
  assert.equal(moved.path, '/home/user/d/sub/a2.txt')
  assert.equal(await sbx.files.read('/home/user/d/sub/a2.txt'), 'hi')
  await sbx.files.remove('/home/user/d/sub')
  assert.equal(await sbx.files.exists('/home/user/d/sub'), false)
})

test('list, setTimeout and connect', async () => {
  const page = await Sandbox.list({ query: { metadata: { suite: 'e2b-sdk' } } }).nextItems()
  assert.ok(page.some((s) => s.sandboxId === sbx.sandboxId), 'listed with its metadata')
  await sbx.setTimeout(60_000)
  const endAt = (await sbx.getInfo()).endAt.getTime()
  assert.ok(Math.abs(endAt - (Date.now() + 60_000)) < 10_000, `endAt ${new Date(endAt).toISOString()}`)
  const again = await Sandbox.connect(sbx.sandboxId)
  const res = await again.commands.run('echo via-connect')
  assert.equal(res.stdout, 'via-connect\n')
})

test('asking for a user other than "user" is refused, not ignored', async () => {
  await assert.rejects(sbx.commands.run('id', { user: 'root' }),
    (e) => e instanceof AuthenticationError && /user 'root' does not exist/.test(e.message))
})

test('unsupported streaming calls explain themselves', async () => {
  await assert.rejects(sbx.pty.create({ cols: 80, rows: 24, onData: () => {} }),
    (e) => /PTY processes are not supported/.test(e.message))
})

test('invalid environment variable names are refused at create', async () => {
  await assert.rejects(Sandbox.create('base', { envs: { 'A=B C': 'x' } }),
    (e) => /400/.test(e.message) && /invalid environment variable name/.test(e.message))
})

test('a wrong API key is rejected with AuthenticationError', async () => {
  await assert.rejects(
    Sandbox.create('base', { apiKey: 'e2b_' + '0'.repeat(40) }),
    (e) => e instanceof AuthenticationError,
  )
})

test('after kill the sandbox is gone', async () => {
  assert.equal(await sbx.kill(), true)
  assert.equal(await sbx.isRunning(), false)
  await assert.rejects(sbx.commands.run('echo nope'), (e) => e instanceof SandboxNotFoundError)
  await assert.rejects(sbx.files.read('/home/user/d/b.txt'), (e) => e instanceof TimeoutError)
  assert.equal(await Sandbox.kill(sbx.sandboxId), false)
})
