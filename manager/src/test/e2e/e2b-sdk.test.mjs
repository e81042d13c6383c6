// End-to-end test of an AgentBox hub with the unmodified E2B JS SDK: the 17-step acceptance
// outline of docs/e2b-wire.md#sandboxes-commands-and-files (step numbers in the test names), plus PTY, WatchDir and port
// forwarding.
//
// Needs E2B_API_URL, E2B_SANDBOX_URL (both the hub's public URL) and E2B_API_KEY (e2b_<hex>).
// E2B_SDK_PACKAGE picks the installed SDK: "e2b" (2.51.0, v2 create/connect paths, the default)
// or "e2b-2-50" (2.50.0, v1 paths); see package.json.
// Run: npm ci && E2B_SDK_PACKAGE=e2b-2-50 node --test e2b-sdk.test.mjs
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import http from 'node:http'
import crypto from 'node:crypto'

for (const name of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY']) {
  if (!process.env[name]) throw new Error(`${name} must be set`)
}
if (process.env.E2B_DEBUG) throw new Error('E2B_DEBUG must not be set (it bypasses the control plane)')

const sdkPackage = process.env.E2B_SDK_PACKAGE ?? 'e2b'
const sdkVersion = createRequire(import.meta.url)(`${sdkPackage}/package.json`).version
console.log(`e2b SDK under test: ${sdkPackage} ${sdkVersion}`)
const {
  Sandbox,
  CommandExitError,
  AuthenticationError,
  FileNotFoundError,
  InvalidArgumentError,
  SandboxNotFoundError,
  TimeoutError,
} = await import(sdkPackage)

const envdUrl = process.env.E2B_SANDBOX_URL
// the template every step runs on: 'base' (the host's root as lower layer) or an image template
const template = process.env.E2B_TEMPLATE ?? 'base'
console.log(`template under test: ${template}`)

let sbx

before(async () => {
  sbx = await Sandbox.create(template, {
    timeoutMs: 120_000,
    envs: { SBX_ENV: 'from-create' },
    metadata: { suite: 'e2b-sdk', sdk: sdkVersion },
  })
})

after(async () => {
  if (sbx) await Sandbox.kill(sbx.sandboxId).catch(() => {})
})

/** Polls `check` until it returns true; fails after `attempts` tries. */
async function eventually(what, check, attempts = 100, pauseMs = 200) {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, pauseMs))
  }
  assert.fail(`${what}: not true after ${attempts} attempts`)
}

/** One Connect server-stream request (docs/e2b-wire.md#streams-and-envelopes) by hand; returns the decoded messages. */
function envelope(json) {
  const payload = Buffer.from(JSON.stringify(json))
  const head = Buffer.alloc(5)
  head.writeUInt32BE(payload.length, 1)
  return Buffer.concat([head, payload])
}

function* envelopes(buf) {
  let off = 0
  while (off + 5 <= buf.length) {
    const flags = buf[off]
    const len = buf.readUInt32BE(off + 1)
    yield { flags, json: JSON.parse(buf.subarray(off + 5, off + 5 + len).toString()) }
    off += 5 + len
  }
}

function envdHeaders(extra = {}) {
  return { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', ...extra }
}

test('1. create returns a running sandbox', async () => {
  assert.match(sbx.sandboxId, /^[a-z0-9-]+$/)
  assert.equal(await sbx.isRunning(), true)
  const info = await sbx.getInfo()
  assert.equal(info.sandboxId, sbx.sandboxId)
  assert.equal(info.state, 'running')
  assert.equal(info.metadata.suite, 'e2b-sdk')
})

test('2. commands.run: stdout, stderr, envs and cwd', async () => {
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

test('3. non-zero exit raises CommandExitError with the exit code and output', async () => {
  await assert.rejects(sbx.commands.run('echo partial; echo bad >&2; exit 3'), (e) => {
    assert.ok(e instanceof CommandExitError, `expected CommandExitError, got ${e}`)
    assert.equal(e.exitCode, 3)
    assert.equal(e.stdout, 'partial\n')
    assert.equal(e.stderr, 'bad\n')
    return true
  })
})

test('4. a cwd that does not exist is InvalidArgumentError', async () => {
  await assert.rejects(sbx.commands.run('pwd', { cwd: '/nope' }),
    (e) => e instanceof InvalidArgumentError && /\/nope/.test(e.message))
})

test('5. a command whose timeout passed is killed server-side', async () => {
  const marker = `timeout-${Date.now()}`
  await assert.rejects(sbx.commands.run(`sleep 30; echo ${marker}`, { timeoutMs: 1000 }),
    (e) => e instanceof TimeoutError)
  // it would run for 30 s on its own; it disappears long before because the server killed it
  await eventually('the timed-out command is gone from commands.list()', async () =>
    !(await sbx.commands.list()).some((p) => p.args.join(' ').includes(marker)), 50)
})

test('6. background command: listed as /bin/bash -l -c, output streamed while it runs', async () => {
  const cmd = 'for i in 1 2 3; do echo tick $i; sleep 0.7; done'
  const ticks = []
  const handle = await sbx.commands.run(cmd, { background: true, onStdout: (d) => ticks.push(d) })
  assert.ok(handle.pid > 0)
  const listed = (await sbx.commands.list()).find((p) => p.pid === handle.pid)
  assert.ok(listed, 'running process is listed')
  assert.equal(listed.cmd, '/bin/bash')
  assert.deepEqual(listed.args, ['-l', '-c', cmd])
  await eventually('the first tick arrives before the command ends', () => ticks.length > 0)
  assert.equal(handle.exitCode, undefined, 'still running when the first tick arrived')
  const res = await handle.wait()
  assert.equal(res.stdout, 'tick 1\ntick 2\ntick 3\n')
  assert.ok(ticks.length >= 2, `output came in ${ticks.length} callback(s)`)
})

test('7. killing a background command; killing an unknown pid', async () => {
  const handle = await sbx.commands.run('sleep 30', { background: true })
  assert.equal(await handle.kill(), true)
  await assert.rejects(handle.wait(), (e) => e instanceof CommandExitError && e.exitCode === -1)
  assert.equal(await sbx.commands.kill(999999), false)
})

test('8. keepalives on a quiet stream; a client that disconnects does not kill its command', async () => {
  // raw Connect client asking for a keepalive after every second of silence
  const res = await fetch(`${envdUrl}/process.Process/Start`, {
    method: 'POST',
    headers: envdHeaders({
      'Content-Type': 'application/connect+json',
      'Connect-Protocol-Version': '1',
      'Keepalive-Ping-Interval': '1',
      'X-Access-Token': await accessToken(),
    }),
    body: envelope({ process: { cmd: '/bin/bash', args: ['-c', 'sleep 3; echo done'] }, stdin: false }),
  })
  assert.equal(res.status, 200)
  const messages = [...envelopes(Buffer.from(await res.arrayBuffer()))]
  const kinds = messages.map((m) => (m.flags === 2 ? 'eos' : Object.keys(m.json.event)[0]))
  assert.equal(kinds[0], 'start')
  assert.ok(kinds.includes('keepalive'), `keepalive among ${kinds}`)
  assert.deepEqual(kinds.slice(-2), ['end', 'eos'])

  const handle = await sbx.commands.run('sleep 60', { background: true, timeoutMs: 0 })
  await handle.disconnect()
  await sbx.commands.run('true') // a round trip after the disconnect reached the hub
  assert.ok((await sbx.commands.list()).some((p) => p.pid === handle.pid), 'still running after disconnect')
  const again = await sbx.commands.connect(handle.pid)
  assert.equal(await again.kill(), true)
})

test('commands.connect streams output from now on, not what was printed before it attached', async () => {
  const marker = `/home/user/away-${Date.now()}`
  const first = []
  const handle = await sbx.commands.run(
    `echo before; read go; for i in 1 2 3 4 5 6; do echo away-$i; sleep 0.3; done; touch ${marker}; read last; echo "live $last"`,
    { background: true, stdin: true, timeoutMs: 0, onStdout: (d) => first.push(d) })
  await eventually('the first line reaches the first client', () => first.join('') === 'before\n')
  await handle.disconnect()
  // printed with nobody attached (the hub notices the gone client at its first write, so several lines)
  await sbx.commands.sendStdin(handle.pid, 'go\n')
  await eventually('the lines printed while nobody was attached', () => sbx.files.exists(marker))
  await new Promise((r) => setTimeout(r, 300)) // read from the pipe by the worker
  const seen = []
  const again = await sbx.commands.connect(handle.pid, { onStdout: (d) => seen.push(d) })
  await sbx.commands.sendStdin(handle.pid, 'now\n')
  const res = await again.wait()
  assert.equal(seen.join(''), 'live now\n', 'envd replays old output only when asked; the SDK never asks')
  assert.equal(res.stdout, 'live now\n')
  assert.equal(first.join(''), 'before\n')
})

async function accessToken() {
  // the SDK keeps the token private; a connect response carries it again
  const res = await fetch(`${process.env.E2B_API_URL}/sandboxes/${sbx.sandboxId}/connect`, {
    method: 'POST',
    headers: { 'X-API-KEY': process.env.E2B_API_KEY, 'Content-Type': 'application/json' },
    body: '{}',
  })
  assert.ok(res.status === 200 || res.status === 201, `connect: ${res.status}`)
  const body = await res.json()
  assert.match(body.envdAccessToken, /.+/)
  return body.envdAccessToken
}

test('9. files: write, read, list, exists, makeDir, rename, getInfo, remove', async () => {
  const info = await sbx.files.write('/home/user/d/a.txt', 'hi')
  assert.deepEqual({ path: info.path, name: info.name, type: info.type }, { path: '/home/user/d/a.txt', name: 'a.txt', type: 'file' })
  assert.equal(await sbx.files.read('/home/user/d/a.txt'), 'hi')
  const many = await sbx.files.write([
    { path: '/home/user/d/b.txt', data: 'bee' },
    { path: '/home/user/d/c.txt', data: 'sea' },
  ])
  assert.deepEqual(many.map((w) => w.path), ['/home/user/d/b.txt', '/home/user/d/c.txt'])
  const bytes = new Uint8Array([0, 1, 2, 250, 255])
  await sbx.files.write('/home/user/d/bin.dat', bytes.buffer, { useOctetStream: true })
  assert.deepEqual(await sbx.files.read('/home/user/d/bin.dat', { format: 'bytes' }), bytes)
  await assert.rejects(sbx.files.read('/home/user/d/missing.txt'), (e) => e instanceof FileNotFoundError)
  await sbx.files.makeDir('/home/user/d/inner')
  const entries = await sbx.files.list('/home/user/d')
  assert.deepEqual(entries.map((e) => [e.name, e.path, e.type]).sort(), [
    ['a.txt', '/home/user/d/a.txt', 'file'],
    ['b.txt', '/home/user/d/b.txt', 'file'],
    ['bin.dat', '/home/user/d/bin.dat', 'file'],
    ['c.txt', '/home/user/d/c.txt', 'file'],
    ['inner', '/home/user/d/inner', 'dir'],
  ])
  assert.equal(await sbx.files.exists('/home/user/d/a.txt'), true)
  assert.equal(await sbx.files.exists('/home/user/d/none.txt'), false)
  assert.equal(await sbx.files.makeDir('/home/user/d/sub'), true)
  assert.equal(await sbx.files.makeDir('/home/user/d/sub'), false)
  const moved = await sbx.files.rename('/home/user/d/b.txt', '/home/user/d/sub/b2.txt')
  assert.equal(moved.path, '/home/user/d/sub/b2.txt')
  assert.equal(await sbx.files.read('/home/user/d/sub/b2.txt'), 'bee')
  assert.equal((await sbx.files.getInfo('/home/user/d/c.txt')).size, 3)
  await sbx.files.remove('/home/user/d/sub')
  assert.equal(await sbx.files.exists('/home/user/d/sub'), false)
  await assert.rejects(sbx.files.list('/home/user/missing-dir'), (e) => e instanceof FileNotFoundError)
  await sbx.files.write('rel.txt', 'relative')
  assert.equal(await sbx.files.read('/home/user/rel.txt'), 'relative')
  const cat = await sbx.commands.run('cat /home/user/d/a.txt /home/user/rel.txt')
  assert.equal(cat.stdout, 'hirelative')
})

test('10. isRunning, setTimeout and getInfo', async () => {
  assert.equal(await sbx.isRunning(), true)
  await sbx.setTimeout(60_000)
  const info = await sbx.getInfo()
  const endAt = info.endAt.getTime()
  assert.ok(Math.abs(endAt - (Date.now() + 60_000)) < 15_000, `endAt ${info.endAt.toISOString()}`)
  assert.equal(info.state, 'running')
  assert.deepEqual(info.metadata, { suite: 'e2b-sdk', sdk: sdkVersion })
})

test('11. list with metadata and state filters', async () => {
  const paginator = Sandbox.list({ query: { metadata: { suite: 'e2b-sdk', sdk: sdkVersion }, state: ['running'] } })
  const page = await paginator.nextItems()
  assert.ok(page.some((s) => s.sandboxId === sbx.sandboxId), 'listed by its metadata')
  assert.equal(paginator.hasNext, false)
  const other = await Sandbox.list({ query: { metadata: { suite: 'no-such-suite' } } }).nextItems()
  assert.ok(!other.some((s) => s.sandboxId === sbx.sandboxId), 'metadata filter excludes it')
  const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems()
  assert.ok(!paused.some((s) => s.sandboxId === sbx.sandboxId), 'state filter excludes it')
})

test('12. connect returns a working instance', async () => {
  const again = await Sandbox.connect(sbx.sandboxId)
  assert.equal(again.sandboxId, sbx.sandboxId)
  const res = await again.commands.run('echo via-connect')
  assert.equal(res.stdout, 'via-connect\n')
})

test('13. signed uploadUrl and downloadUrl work without X-Access-Token', async () => {
  const up = await sbx.uploadUrl('/home/user/signed.txt')
  assert.match(up, /signature=v1_/)
  const form = new FormData()
  form.append('file', new Blob(['signed upload']), '/home/user/signed.txt')
  const put = await fetch(up, { method: 'POST', body: form })
  assert.equal(put.status, 200, await put.clone().text())
  const down = await sbx.downloadUrl('/home/user/signed.txt')
  const got = await fetch(down)
  assert.equal(got.status, 200)
  assert.equal(await got.text(), 'signed upload')
  const tampered = await fetch(down.replace('signed.txt', 'rel.txt'))
  assert.equal(tampered.status, 401, 'a signature covers only its own path')
})

test('15. a wrong API key and a missing X-Access-Token are AuthenticationErrors', async () => {
  await assert.rejects(
    Sandbox.create(template, { apiKey: 'e2b_' + '0'.repeat(40) }),
    (e) => e instanceof AuthenticationError,
  )
  const res = await fetch(`${envdUrl}/process.Process/List`, {
    method: 'POST',
    headers: envdHeaders({ 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1' }),
    body: '{}',
  })
  assert.equal(res.status, 401)
  assert.equal((await res.json()).code, 'unauthenticated')
})

test('16. concurrency: 20 commands on one sandbox, 5 sandboxes at once', async () => {
  const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => sbx.commands.run(`echo run-${i}`)))
  assert.deepEqual(runs.map((r) => r.stdout), Array.from({ length: 20 }, (_, i) => `run-${i}\n`))
  const many = await Promise.all(Array.from({ length: 5 }, () => Sandbox.create(template, { timeoutMs: 60_000 })))
  try {
    assert.equal(new Set(many.map((s) => s.sandboxId)).size, 5)
    const out = await Promise.all(many.map((s) => s.commands.run('hostname')))
    assert.deepEqual(out.map((r) => r.stdout.trim()), many.map((s) => s.sandboxId))
  } finally {
    await Promise.all(many.map((s) => s.kill()))
  }
})

test('user: root runs as root inside, the default user as uid 1000', async () => {
  const root = await sbx.commands.run('id -u; echo $HOME; touch /etc/written-by-root && echo ok', { user: 'root' })
  assert.equal(root.stdout, '0\n/root\nok\n')
  const user = await sbx.commands.run('id -u; echo $HOME')
  assert.equal(user.stdout, '1000\n/home/user\n')
  await assert.rejects(sbx.commands.run('touch /etc/not-by-user'), (e) => e instanceof CommandExitError)
  await assert.rejects(sbx.commands.run('id', { user: 'nobody-here' }),
    (e) => e instanceof AuthenticationError && /user 'nobody-here' does not exist/.test(e.message))
})

test('files with user: root: /etc is writable, relative paths land in /root, signed URLs and watches as root', async () => {
  const root = { user: 'root' }
  const etc = await sbx.files.write('/etc/agentbox-e2e.conf', 'by root', root)
  assert.equal(etc.path, '/etc/agentbox-e2e.conf')
  assert.equal(await sbx.files.read('/etc/agentbox-e2e.conf', root), 'by root')
  assert.equal((await sbx.commands.run('stat -c %U /etc/agentbox-e2e.conf')).stdout, 'root\n')
  // the default user reads it (0644) but may not write there: envd's 403 is a SandboxError
  assert.equal(await sbx.files.read('/etc/agentbox-e2e.conf'), 'by root')
  await assert.rejects(sbx.files.write('/etc/agentbox-e2e.conf', 'by user'), (e) => /403/.test(e.message) && /permission denied/.test(e.message))
  // relative paths resolve against root's home, over multipart, octet-stream and every RPC
  assert.equal((await sbx.files.write('notes/a.txt', 'a', root)).path, '/root/notes/a.txt')
  assert.equal((await sbx.files.write('notes/b.bin', new Uint8Array([1, 2]).buffer, { ...root, useOctetStream: true })).path, '/root/notes/b.bin')
  assert.deepEqual((await sbx.files.list('notes', root)).map((e) => e.path).sort(), ['/root/notes/a.txt', '/root/notes/b.bin'])
  assert.equal((await sbx.files.getInfo('notes/a.txt', root)).path, '/root/notes/a.txt')
  assert.equal(await sbx.files.makeDir('made', root), true)
  assert.equal((await sbx.files.rename('notes/a.txt', 'made/a.txt', root)).path, '/root/made/a.txt')
  assert.equal(await sbx.files.exists('/root/made/a.txt', root), true)
  assert.equal(await sbx.files.exists('/root/made/a.txt'), false, "the default user cannot see into root's home")
  // a watch as root sees root's home
  const seen = []
  const watch = await sbx.files.watchDir('made', (e) => { seen.push(e) }, { ...root, timeoutMs: 0 })
  await sbx.files.write('/root/made/new.txt', 'n', root)
  await eventually('a create in /root/made arrives', () => seen.some((e) => e.type === 'create' && e.name === 'new.txt'))
  await watch.stop()
  // signed URLs carry the user (username=root is part of the signature)
  const up = await sbx.uploadUrl('/root/signed.txt', root)
  const form = new FormData()
  form.append('file', new Blob(['signed by root']), '/root/signed.txt')
  const put = await fetch(up, { method: 'POST', body: form })
  assert.equal(put.status, 200, await put.clone().text())
  assert.equal(await (await fetch(await sbx.downloadUrl('/root/signed.txt', root))).text(), 'signed by root')
  await sbx.files.remove('made', root)
  assert.equal(await sbx.files.exists('/root/made', root), false)
  await sbx.files.remove('/etc/agentbox-e2e.conf', root)
  // a user the sandbox does not have is an AuthenticationError on files and RPCs alike
  await assert.rejects(sbx.files.read('/etc/hostname', { user: 'nobody-here' }),
    (e) => e instanceof AuthenticationError && /user 'nobody-here' does not exist/.test(e.message))
  await assert.rejects(sbx.files.list('/', { user: 'nobody-here' }),
    (e) => e instanceof AuthenticationError && /user 'nobody-here' does not exist/.test(e.message))
})

test('stdin: sendStdin and closeStdin reach a background command', async () => {
  const handle = await sbx.commands.run('cat; echo "[eof]"', { background: true, stdin: true })
  await sbx.commands.sendStdin(handle.pid, 'line one\n')
  await sbx.commands.sendStdin(handle.pid, new TextEncoder().encode('line two\n'))
  await sbx.commands.closeStdin(handle.pid)
  const res = await handle.wait()
  assert.equal(res.stdout, 'line one\nline two\n[eof]\n')
})

test('pty: create, sendInput, resize, kill', async () => {
  let screen = ''
  const decoder = new TextDecoder()
  const term = await sbx.pty.create({ cols: 80, rows: 24, envs: { PTY_ENV: 'in-pty' }, onData: (d) => { screen += decoder.decode(d) } })
  assert.ok(term.pid > 0)
  const type = (line) => sbx.pty.sendInput(term.pid, new TextEncoder().encode(line + '\n'))
  // the size is the kernel's (TIOCGWINSZ via stty), the device a real terminal
  await type('echo "size=$(stty size) tty=$(tty) term=$TERM env=$PTY_ENV"')
  await eventually('the terminal reports its size', () => /size=24 80 tty=\/dev\/pts\/\d+ term=xterm-256color env=in-pty/.test(screen))
  await sbx.pty.resize(term.pid, { cols: 100, rows: 30 })
  await type('echo "resized=$(stty size)"')
  await eventually('the resize reached the terminal', () => /resized=30 100/.test(screen))
  assert.ok((await sbx.commands.list()).some((p) => p.pid === term.pid), 'the pty is listed')
  // a second client attaches to the running terminal and sees what it prints from now on
  let second = ''
  const attached = await sbx.pty.connect(term.pid, { onData: (d) => { second += decoder.decode(d) } })
  await type('echo "attached=$((6 * 7))"')
  await eventually('the attached client sees the output', () => second.includes('attached=42'))
  await attached.disconnect()
  assert.equal(await sbx.pty.kill(term.pid), true)
  await assert.rejects(term.wait(), (e) => e instanceof CommandExitError && e.exitCode === -1)
  assert.equal(await sbx.pty.kill(term.pid), false)
})

test('pty: a shell that exits ends the session with its exit code', async () => {
  const term = await sbx.pty.create({ cols: 40, rows: 10, onData: () => {} })
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('exit 7\n'))
  await assert.rejects(term.wait(), (e) => e instanceof CommandExitError && e.exitCode === 7)
})

test('files.watchDir: create, write, rename, chmod, remove; recursive; stop', async () => {
  await sbx.files.makeDir('/home/user/w/sub')
  const seen = []
  const has = (type, name) => seen.some((e) => e.type === type && e.name === name)
  const watch = await sbx.files.watchDir('/home/user/w', (e) => { seen.push(e) }, { timeoutMs: 0 })
  await sbx.files.write('/home/user/w/a.txt', 'one')
  await sbx.commands.run('echo more >> /home/user/w/a.txt; mv /home/user/w/a.txt /home/user/w/b.txt; chmod 600 /home/user/w/b.txt; rm /home/user/w/b.txt; touch /home/user/w/sub/deep.txt')
  await eventually('every kind of event arrives', () =>
    has('create', 'a.txt') && has('write', 'a.txt') && has('rename', 'a.txt') && has('create', 'b.txt')
      && has('chmod', 'b.txt') && has('remove', 'b.txt'))
  assert.ok(!seen.some((e) => e.name.includes('deep.txt')), 'not recursive unless asked')
  await watch.stop()

  const deep = []
  const rec = await sbx.files.watchDir('/home/user/w', (e) => { deep.push(e) }, { recursive: true, timeoutMs: 0 })
  await sbx.files.write('/home/user/w/sub/x.txt', 'x')
  await eventually('a nested change arrives with its relative name', () => deep.some((e) => e.type === 'create' && e.name === 'sub/x.txt'))
  await rec.stop()
  await assert.rejects(sbx.files.watchDir('/home/user/no-such-dir', () => {}), (e) => e instanceof FileNotFoundError)
})

test('files.watchDir: killing the sandbox ends the watch with an error for onExit, naming the sandbox', async () => {
  const victim = await Sandbox.create(template, { timeoutMs: 60_000 })
  let exited
  const onExit = new Promise((resolve) => { exited = resolve })
  try {
    await victim.files.makeDir('/home/user/watched')
    await victim.files.watchDir('/home/user/watched', () => {}, { timeoutMs: 0, onExit: (err) => exited({ err }) })
  } catch (e) {
    await victim.kill()
    throw e
  }
  assert.equal(await victim.kill(), true)
  let timer
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('onExit not called within 20 s')), 20_000) })
  const { err } = await Promise.race([onExit, late]).finally(() => clearTimeout(timer))
  assert.ok(err instanceof Error, `onExit got an error, not ${err}`)
  assert.ok(err instanceof TimeoutError, `the SDK maps unavailable to TimeoutError, got ${err?.name}`)
  assert.match(err.message, new RegExp(`sandbox ${victim.sandboxId} was killed`))
})

// A web server inside the sandbox (node, from the host's read-only /usr): echoes requests, and
// upgrades to WebSocket, answering each text frame with the upper-cased text.
const SERVER_JS = `
const http = require('http'), crypto = require('crypto')
const srv = http.createServer((req, res) => {
  let body = ''
  req.on('data', (d) => { body += d })
  req.on('end', () => { res.setHeader('X-Served-By', 'sandbox'); res.end(req.method + ' ' + req.url + ' host=' + req.headers.host + ' body=' + body) })
})
srv.on('upgrade', (req, socket) => {
  const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64')
  socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: ' + accept + '\\r\\n\\r\\n')
  socket.on('data', (f) => {
    const len = f[1] & 0x7f, mask = f.subarray(2, 6), text = Buffer.from(f.subarray(6, 6 + len).map((b, i) => b ^ mask[i % 4])).toString()
    const out = Buffer.from(text.toUpperCase())
    socket.write(Buffer.concat([Buffer.from([0x81, out.length]), out]))
  })
})
srv.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('listening'))
`

/** GET/POST through the hub with an explicit Host header (fetch cannot set Host). */
function hubRequest({ method = 'GET', path, headers = {}, body }) {
  const hub = new URL(process.env.E2B_API_URL)
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hub.hostname, port: hub.port, method, path, headers }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

test('ports: a web server in the sandbox is reachable through the hub (getHost, header and path routing, WebSocket)', { timeout: 120_000 }, async () => {
  const port = 20000 + Math.floor(Math.random() * 20000)
  await sbx.files.write('/home/user/server.js', SERVER_JS)
  let out = ''
  const server = await sbx.commands.run(`node /home/user/server.js ${port}`, {
    background: true, timeoutMs: 0, onStdout: (d) => { out += d }, onStderr: (d) => { out += d } })
  try {
    await eventually('the server listens', () => out.includes('listening') || server.exitCode !== undefined)
    assert.equal(out, 'listening\n')
    const host = sbx.getHost(port)
    assert.ok(host.startsWith(`${port}-${sbx.sandboxId}.`), host)

    const byHost = await hubRequest({ path: '/hello?x=1', headers: { Host: host } })
    assert.equal(byHost.status, 200)
    assert.equal(byHost.headers['x-served-by'], 'sandbox')
    assert.equal(byHost.text, `GET /hello?x=1 host=${host} body=`)

    const byHeader = await fetch(`${envdUrl}/h?y=2`, { method: 'POST', body: 'payload', headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': String(port) } })
    assert.equal(byHeader.status, 200)
    assert.match(await byHeader.text(), /^POST \/h\?y=2 host=.* body=payload$/)

    const byPath = await fetch(`${process.env.E2B_API_URL}/sandboxes/${sbx.sandboxId}/${port}/p/q?z=3`)
    assert.equal(byPath.status, 200)
    assert.match(await byPath.text(), /^GET \/p\/q\?z=3 /)

    const closed = await hubRequest({ path: '/', headers: { Host: sbx.getHost(port === 65000 ? 65001 : 65000) } })
    assert.equal(closed.status, 502)
    assert.match(JSON.parse(closed.text).message, /port is not open/)
    const unknown = await hubRequest({ path: '/', headers: { Host: `${port}-nosuchsandbox.e2b.app` } })
    assert.equal(unknown.status, 502)
    assert.equal(JSON.parse(unknown.text).message, 'The sandbox was not found')

    // WebSocket: upgrade through the hub, one masked text frame each way
    const hub = new URL(process.env.E2B_API_URL)
    const key = crypto.randomBytes(16).toString('base64')
    const reply = await new Promise((resolve, reject) => {
      const req = http.request({ host: hub.hostname, port: hub.port, path: '/ws', headers: {
        Host: host, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': key } })
      req.on('upgrade', (res, socket) => {
        const expected = crypto.createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64')
        if (res.statusCode !== 101 || res.headers['sec-websocket-accept'] !== expected) reject(new Error(`bad upgrade ${res.statusCode}`))
        const text = Buffer.from('hello over the tunnel')
        const mask = crypto.randomBytes(4)
        socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | text.length]), mask, text.map((b, i) => b ^ mask[i % 4])]))
        socket.once('data', (f) => { resolve(f.subarray(2, 2 + (f[1] & 0x7f)).toString()); socket.destroy() })
      })
      req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)))
      req.on('error', reject)
      req.end()
    })
    assert.equal(reply, 'HELLO OVER THE TUNNEL')
  } finally {
    await server.kill()
  }
})

test('invalid environment variable names are refused at create', async () => {
  await assert.rejects(Sandbox.create(template, { envs: { 'A=B C': 'x' } }),
    (e) => /400/.test(e.message) && /invalid environment variable name/.test(e.message))
})

test('14. after kill the sandbox is gone everywhere', async () => {
  assert.equal(await sbx.kill(), true)
  assert.equal(await sbx.kill(), false)
  assert.equal(await sbx.isRunning(), false)
  await assert.rejects(sbx.commands.run('echo nope'), (e) => e instanceof SandboxNotFoundError)
  await assert.rejects(sbx.files.read('/home/user/d/a.txt'), (e) => e instanceof TimeoutError)
  await assert.rejects(Sandbox.connect(sbx.sandboxId), (e) => e instanceof SandboxNotFoundError)
  await assert.rejects(Sandbox.getInfo(sbx.sandboxId), (e) => e instanceof SandboxNotFoundError)
  await assert.rejects(Sandbox.setTimeout(sbx.sandboxId, 30_000), (e) => e instanceof SandboxNotFoundError)
  assert.equal(await Sandbox.kill(sbx.sandboxId), false)
})
