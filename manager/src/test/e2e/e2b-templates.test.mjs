// Template.build end to end with the unmodified E2B JS SDK: the acceptance outline of
// docs/e2b-wire.md#templates-lifecycle-and-snapshots items 1-9 (step numbers in the test names), built
// fromTemplate('base') so it runs offline.
//
// Control-plane calls go through a recording proxy that serves the API below a path prefix
// (/e2b-prefix, told to the hub with X-Forwarded-Prefix) and keeps the client's Host, so the
// upload links the hub hands out must point back at the proxy; the log it keeps lets the tests
// assert wire details (docs/e2b-wire.md#template-builds): Content-Length: 0 on the trigger's 202, growing logsOffset, a PUT
// without an API key, logEntries always an array.
//
// Needs E2B_API_URL, E2B_SANDBOX_URL (the hub's public URL), E2B_API_KEY, E2B_TEAM (the key's
// team) and E2B_DOCKERFILE_BASE (an image the hub's worker can pull, with bash, cat, pwd, id: the
// FROM of step 10). E2B_SDK_PACKAGE: "e2b" (2.51.0, default) or "e2b-2-50" (2.50.0).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import http from 'node:http'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

for (const name of ['E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY', 'E2B_TEAM', 'E2B_DOCKERFILE_BASE']) {
  if (!process.env[name]) throw new Error(`${name} must be set`)
}
const sdkPackage = process.env.E2B_SDK_PACKAGE ?? 'e2b'
const sdkVersion = createRequire(import.meta.url)(`${sdkPackage}/package.json`).version
console.log(`e2b SDK under test: ${sdkPackage} ${sdkVersion}`)
const { Sandbox, Template, waitForPort } = await import(sdkPackage)
const team = process.env.E2B_TEAM
const hub = new URL(process.env.E2B_API_URL)
const PREFIX = '/e2b-prefix'
const run = crypto.randomBytes(4).toString('hex')
const name = `acc-${run}`

/** Every control-plane exchange: {method, url, status, reqHeaders, resHeaders, body (parsed JSON or null)}. */
const wire = []
let proxy

before(async () => {
  proxy = http.createServer((req, res) => {
    if (!req.url.startsWith(PREFIX + '/')) {
      res.writeHead(404).end()
      return
    }
    const headers = { ...req.headers, 'x-forwarded-prefix': PREFIX }
    const up = http.request({ host: hub.hostname, port: hub.port, method: req.method, path: req.url.slice(PREFIX.length), headers }, (r) => {
      const chunks = []
      r.on('data', (c) => chunks.push(c))
      r.on('end', () => {
        const buf = Buffer.concat(chunks)
        let body = null
        try { body = buf.length ? JSON.parse(buf.toString()) : null } catch { body = null }
        wire.push({ method: req.method, url: req.url, status: r.statusCode, reqHeaders: req.headers, resHeaders: r.headers, body })
        res.writeHead(r.statusCode, r.headers)
        res.end(buf)
      })
    })
    up.on('error', (e) => { res.writeHead(502).end(String(e)) })
    req.pipe(up)
  })
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r))
  process.env.E2B_API_URL = `http://127.0.0.1:${proxy.address().port}${PREFIX}`
})

after(async () => {
  proxy?.close()
})

/** A temp build context: a.txt, folder/{test.txt, sub/deep.txt}. */
function context() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2b-tpl-'))
  fs.writeFileSync(path.join(dir, 'a.txt'), `hello from ${run}\n`)
  fs.mkdirSync(path.join(dir, 'folder', 'sub'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'folder', 'test.txt'), 'test\n')
  fs.writeFileSync(path.join(dir, 'folder', 'sub', 'deep.txt'), 'deep\n')
  return dir
}
const ctx = context()

function fullTemplate(opts = {}) {
  return Template({ fileContextPath: ctx })
    .fromTemplate('base')
    .copy('folder', '/app/folder/', { mode: 0o755, forceUpload: opts.forceUpload })
    .copy('a.txt', '/app/a.txt')
    .runCmd('cat /app/a.txt')
    .setEnvs({ FOO: 'bar' })
    .runCmd('test "$FOO" = bar')
    .setWorkdir('/app')
    .setUser('user')
    .setStartCmd('python3 -m http.server 8000', waitForPort(8000))
}

const since = (n) => wire.slice(n)
let built
let builtLogs = []

test('1. Template.exists: base is there, an unknown name is not', async () => {
  assert.equal(await Template.exists('base'), true)
  assert.equal(await Template.exists(`nope-${crypto.randomUUID()}`), false)
})

test('2. Template.build of fromTemplate(base) + COPY/RUN/ENV/WORKDIR/USER + start command', async () => {
  const mark = wire.length
  built = await Template.build(fullTemplate(), `${name}:v1`, { tags: ['stable'], onBuildLogs: (l) => builtLogs.push(l.message) })
  assert.equal(built.name, `${name}:v1`)
  assert.ok(built.templateId && built.buildId, JSON.stringify(built))
  for (const t of ['v1', 'stable']) assert.ok(built.tags.includes(t), `tags ${built.tags}`)
  const logs = builtLogs.join('\n')
  for (const want of ['Build started', '[builder', 'Build finished']) assert.ok(logs.includes(want), `logs lack ${want}:\n${logs}`)

  const w = since(mark)
  const request = w.find((x) => x.method === 'POST' && x.url.endsWith('/v3/templates'))
  assert.equal(request.status, 202)
  for (const f of ['templateID', 'buildID', 'names', 'aliases', 'tags', 'public']) assert.ok(f in request.body, `v3 lacks ${f}`)
  const links = w.filter((x) => x.method === 'GET' && /\/files\/[0-9a-f]{64}$/.test(x.url))
  assert.equal(links.length, 2, 'one link per COPY step')
  for (const l of links) {
    assert.equal(l.status, 201)
    assert.equal(typeof l.body.present, 'boolean')
    assert.ok(l.body.url.startsWith(`${process.env.E2B_API_URL}/templates/`), `upload url ${l.body.url} is not the client's base`)
  }
  const puts = w.filter((x) => x.method === 'PUT')
  assert.equal(puts.length, 2, 'both archives uploaded on the first build')
  for (const p of puts) {
    assert.equal(p.status, 200)
    assert.equal(p.reqHeaders['x-api-key'], undefined, 'the upload carries no API key')
    assert.ok(Number(p.reqHeaders['content-length']) > 0, 'exact Content-Length')
  }
  const trigger = w.find((x) => x.method === 'POST' && x.url.includes(`/v2/templates/${built.templateId}/builds/${built.buildId}`))
  assert.equal(trigger.status, 202)
  assert.equal(trigger.resHeaders['content-length'], '0', 'the trigger 202 says Content-Length: 0')
  const polls = w.filter((x) => x.url.includes(`/builds/${built.buildId}/status`))
  assert.ok(polls.length >= 2, `${polls.length} status polls`)
  let offset = 0
  for (const p of polls) {
    assert.equal(p.status, 200)
    assert.ok(Array.isArray(p.body.logEntries) && Array.isArray(p.body.logs))
    assert.equal(new URL(p.url, 'http://x').searchParams.get('logsOffset'), String(offset), 'logsOffset is the running total')
    offset += p.body.logEntries.length
  }
  assert.ok(offset > 3, 'server log lines arrived')
  const last = polls[polls.length - 1].body
  assert.equal(last.status, 'ready')
  assert.deepEqual(last.logEntries, [], 'the drain poll past the end is []')
})

test('3. Sandbox.create(name:tag) has the final USER/WORKDIR, the copied files and the start command running', async () => {
  const sbx = await Sandbox.create(`${name}:v1`, { timeoutMs: 120_000 })
  try {
    assert.equal((await sbx.commands.run('pwd')).stdout.trim(), '/app')
    assert.equal((await sbx.commands.run('whoami')).stdout.trim(), 'user')
    assert.equal(await sbx.files.read('/app/a.txt'), fs.readFileSync(path.join(ctx, 'a.txt'), 'utf8'))
    assert.equal(await sbx.files.read('/app/folder/sub/deep.txt'), 'deep\n', 'directory merged into dest')
    assert.equal((await sbx.commands.run('stat -c %a /app/folder/test.txt')).stdout.trim(), '755')
    const page = await sbx.commands.run('curl -s -o /dev/null -w "%{http_code}" localhost:8000')
    assert.equal(page.stdout.trim(), '200', 'the start command serves at once')
    assert.equal((await sbx.commands.run('echo "[$FOO]"')).stdout.trim(), '[]', 'ENV is build-time only')
    assert.equal((await sbx.commands.run('whoami', { user: 'root' })).stdout.trim(), 'root')
    // the sandbox names the template as E2B does, and those names create it again
    // (the build has tags v1 and stable, no default: the alias carries the tag)
    const info = await sbx.getInfo()
    assert.equal(info.templateId, built.templateId)
    assert.ok([`${name}:v1`, `${name}:stable`].includes(info.name), info.name)
    const listed = (await Sandbox.list().nextItems()).find((s) => s.sandboxId === sbx.sandboxId)
    assert.equal(listed.templateId, built.templateId)
    assert.equal(listed.name, info.name)
    const other = await Sandbox.create(info.name, { timeoutMs: 60_000 })
    try {
      assert.equal((await other.commands.run('pwd')).stdout.trim(), '/app', `create(${info.name})`)
    } finally {
      await other.kill()
    }
  } finally {
    await sbx.kill()
  }
})

test('4. A rebuild finds the archives cached; forceUpload uploads again', async () => {
  let mark = wire.length
  const again = await Template.build(fullTemplate(), `${name}:v1`, { tags: ['stable'] })
  assert.equal(again.templateId, built.templateId, 'same name, same template')
  assert.notEqual(again.buildId, built.buildId)
  const links = since(mark).filter((x) => x.method === 'GET' && /\/files\//.test(x.url))
  assert.ok(links.every((l) => l.body.present === true && l.body.url), 'links say present and still give a url')
  assert.equal(since(mark).filter((x) => x.method === 'PUT').length, 0, 'nothing re-uploaded')
  mark = wire.length
  await Template.build(fullTemplate({ forceUpload: true }), `${name}:v1`, { tags: ['stable'] })
  assert.equal(since(mark).filter((x) => x.method === 'PUT').length, 1, 'forceUpload uploads its archive')
})

test('5. A failing step ends the build in error, naming the step', async () => {
  const t = Template().fromTemplate('base').runCmd('echo ok').runCmd('exit 7')
  let info
  await assert.rejects(Template.build(t, `${name}-fail`, { onBuildLogs: () => {} }), (e) => {
    assert.equal(e.name, 'BuildError')
    assert.match(e.message, /exit status 7/)
    return true
  })
  const w = wire.filter((x) => x.method === 'POST' && x.url.endsWith('/v3/templates') && x.body?.names?.[0] === `${name}-fail`)
  info = { templateId: w[0].body.templateID, buildId: w[0].body.buildID }
  const status = await Template.getBuildStatus(info)
  assert.equal(status.status, 'error')
  assert.equal(status.reason.step, '2')
  assert.match(status.reason.message, /exit status 7/)
  // an unknown name's 404 lists the team's built templates beside the configured ones
  await assert.rejects(Sandbox.create(`nope-${crypto.randomUUID()}`), (e) => {
    assert.match(e.message, new RegExp(`available templates: .*base.*${name}`))
    return true
  })
  // a create of the template says why it has nothing to start from
  await assert.rejects(Sandbox.create(`${name}-fail`), (e) => {
    assert.match(e.message, /no ready build; its last build [0-9a-f-]+ is error \(step 2: .*exit status 7/)
    return true
  })
})

test('6. buildInBackground returns at once; getBuildStatus says building, then ready', async () => {
  const t = Template().fromTemplate('base').runCmd('sleep 1 && echo bg > /home/user/bg.txt')
  const info = await Template.buildInBackground(t, `${name}-bg`)
  const first = await Template.getBuildStatus(info)
  assert.ok(['building', 'ready'].includes(first.status), first.status)
  let status = first
  for (let i = 0; i < 300 && status.status !== 'ready'; i++) {
    assert.notEqual(status.status, 'error', JSON.stringify(status.reason))
    await new Promise((r) => setTimeout(r, 200))
    status = await Template.getBuildStatus(info)
  }
  assert.equal(status.status, 'ready')
  const sbx = await Sandbox.create(`${name}-bg`)
  try {
    assert.equal(await sbx.files.read('/home/user/bg.txt'), 'bg\n')
    // the default tag: the alias alone names the build, and so does the template id
    const named = await sbx.getInfo()
    assert.equal(named.name, `${name}-bg`)
    assert.equal(named.templateId, info.templateId)
    const byId = await Sandbox.create(named.templateId)
    try {
      assert.equal(await byId.files.read('/home/user/bg.txt'), 'bg\n')
    } finally {
      await byId.kill()
    }
  } finally {
    await sbx.kill()
  }
})

test('7. Tags: assign, list, remove; a removed tag no longer starts sandboxes', async () => {
  const assigned = await Template.assignTags(`${name}:v1`, ['prod'])
  const tags = await Template.getTags(name)
  const v1 = tags.find((t) => t.tag === 'v1')
  assert.equal(assigned.buildId, v1.buildId)
  assert.deepEqual(assigned.tags, ['prod'])
  for (const t of ['v1', 'stable', 'prod']) assert.ok(tags.some((x) => x.tag === t), `tag ${t} in ${JSON.stringify(tags)}`)
  assert.ok(tags.every((t) => t.createdAt instanceof Date && !isNaN(t.createdAt)))
  const sbx = await Sandbox.create(`${name}:prod`)
  await sbx.kill()
  await Template.removeTags(name, 'prod')
  assert.ok(!(await Template.getTags(name)).some((t) => t.tag === 'prod'))
  await assert.rejects(Template.getTags(`nonexistent-${run}`), (e) => {
    assert.equal(e.name, 'TemplateError')
    return true
  })
  await assert.rejects(Sandbox.create(`${name}:prod`))
})

test('8. Names with a namespace and a tag in the path (%2F, %3A)', async () => {
  assert.equal(await Template.exists(`${team}/${name}:v1`), true)
  assert.equal(await Template.exists(`${team}/${name}:nope`), false)
  const tags = await Template.getTags(`${team}/${name}`)
  assert.ok(tags.some((t) => t.tag === 'v1'))
  assert.ok(wire.some((x) => x.url.includes(`/templates/aliases/${encodeURIComponent(team)}%2F${name}%3Av1`) && x.status === 200))
  await assert.rejects(Template.build(Template().fromTemplate('base'), `someone-else/${name}-x`), (e) => {
    assert.equal(e.name, 'BuildError')
    assert.match(e.message, /^400/)
    return true
  })
})

test('10. fromDockerfile: FROM a pullable image, ENV, WORKDIR, COPY, RUN; the sandbox has its user and workdir', async () => {
  const dockerfile = [
    `FROM ${process.env.E2B_DOCKERFILE_BASE}`,
    'ENV GREETING=hello',
    'WORKDIR /srv',
    'COPY a.txt ./',
    'COPY folder /srv/folder',
    'RUN echo "$GREETING from run as $(id -un)" > /srv/run.txt',
  ].join('\n')
  const t = Template({ fileContextPath: ctx }).fromDockerfile(dockerfile)
  const mark = wire.length
  const info = await Template.build(t, `${name}-docker:v1`, { onBuildLogs: () => {} })
  const trigger = since(mark).find((x) => x.method === 'POST' && x.url.includes(`/builds/${info.buildId}`) && !x.url.endsWith('/status'))
  assert.ok(trigger, 'the build was triggered')
  const sbx = await Sandbox.create(`${name}-docker:v1`, { timeoutMs: 120_000 })
  try {
    assert.equal((await sbx.commands.run('pwd')).stdout.trim(), '/srv', 'the Dockerfile WORKDIR is the default cwd')
    assert.equal((await sbx.commands.run('id -un')).stdout.trim(), 'user', 'no USER in the file: the SDK ends with USER user')
    assert.equal(await sbx.files.read('/srv/a.txt'), fs.readFileSync(path.join(ctx, 'a.txt'), 'utf8'), 'COPY a.txt ./ lands in WORKDIR')
    assert.equal(await sbx.files.read('/srv/folder/sub/deep.txt'), 'deep\n', 'COPY of a directory merges it into dest')
    assert.equal(await sbx.files.read('/srv/run.txt'), 'hello from run as root\n', 'RUN saw the ENV and ran as root (the SDK starts with USER root)')
    assert.equal((await sbx.commands.run('echo "[$GREETING]"')).stdout.trim(), '[]', 'ENV is build-time only')
  } finally {
    await sbx.kill()
  }
})

test('9. Every status response had an array logEntries; no empty chunked 2xx', async () => {
  const statuses = wire.filter((x) => x.url.includes('/status'))
  assert.ok(statuses.length > 5)
  for (const s of statuses) assert.ok(Array.isArray(s.body?.logEntries), `${s.url}: ${JSON.stringify(s.body)}`)
  for (const x of wire) {
    if (x.status >= 200 && x.status < 300 && x.status !== 204 && x.body === null) {
      assert.equal(x.resHeaders['content-length'], '0', `${x.method} ${x.url} empty ${x.status} without Content-Length: 0`)
    }
  }
})
