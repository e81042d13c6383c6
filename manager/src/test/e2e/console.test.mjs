// The browser console (/console on the hub's public port) in a real headless Chromium driven by
// puppeteer-core: sign-in, each page with real content from a live standalone, a kill from the UI,
// a command typed into the terminal, live updates from GET /v1/events; a screenshot of each page (1280x800 PNG).
//
// Needs E2B_API_URL and E2B_SANDBOX_URL (the hub's public URL), E2B_API_KEY (an admin key),
// CONSOLE_CLUSTER (the standalone's cluster id), CHROMIUM (the browser's executable) and
// SCREENSHOT_DIR (where the PNGs go). Setup goes through the APIs directly (fetch, and the E2B SDK
// for Template.build); every assertion about the console reads the page or the xterm buffer.
//
// The native API grows route by route: where the hub answers a page's route with 404 "no route
// for …" (or 501), the step asserts instead that the page shows its "not available on this hub"
// note, and prints `NOT AVAILABLE: <route>` (StandaloneConsoleTest reports those lines).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import puppeteer from 'puppeteer-core'
import { Template } from 'e2b'

for (const name of ['E2B_API_URL', 'E2B_API_KEY', 'CONSOLE_CLUSTER', 'CHROMIUM', 'SCREENSHOT_DIR']) {
  if (!process.env[name]) throw new Error(`${name} must be set`)
}
const hub = process.env.E2B_API_URL.replace(/\/$/, '')
const key = process.env.E2B_API_KEY
const cluster = process.env.CONSOLE_CLUSTER
const shots = process.env.SCREENSHOT_DIR
const run = crypto.randomBytes(3).toString('hex')
const WAIT = 30_000

let browser
let page
/** Errors the page reported (uncaught exceptions, console errors such as CSP violations). */
const pageErrors = []
const built = {}
const failed = {}
let snapshotId

/** A call on the hub's API with the admin key; resolves to {status, json}. */
async function api(method, url, body) {
  const r = await fetch(hub + url, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await r.text()
  let json = null
  try { json = text ? JSON.parse(text) : null } catch { json = text }
  return { status: r.status, json }
}

async function createSandbox(metadata) {
  const r = await api('POST', '/v1/sandboxes', { template: 'base', timeoutSeconds: 600, metadata })
  assert.equal(r.status, 201, JSON.stringify(r.json))
  return r.json.id
}

/** True when the hub has no such route (404 "no route for …", or 501); printed as NOT AVAILABLE. */
async function missing(method, url) {
  const r = await api(method, url)
  const gone = r.status === 501 || (r.status === 404 && String(r.json?.error?.message).startsWith('no route for'))
  if (gone) console.log(`NOT AVAILABLE: ${method} ${url.replace(/\?.*/, '')}`)
  return gone
}

/** Waits for the "not available on this hub" note inside selector. */
async function waitUnavailable(selector) {
  await waitText(`${selector} .note-unavailable`, 'not available on this hub')
}

async function shot(name) {
  await page.screenshot({ path: path.join(shots, `${name}.png`) })
}

async function go(hash) {
  await page.evaluate((h) => { location.hash = h }, hash)
}

/** Waits until the element matching selector contains text. */
async function waitText(selector, text, timeout = WAIT) {
  await page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((e) => e.textContent.includes(t)),
    { timeout }, selector, text)
}

before(async () => {
  fs.mkdirSync(shots, { recursive: true })
  // a built template with build logs, and a snapshot, for their pages; before the browser starts,
  // since the build's sandboxes add network interfaces (see StandaloneConsoleTest on ERR_NETWORK_CHANGED)
  const t = Template().fromTemplate('base').runCmd(`echo console-build-${run}`)
  const b = await Template.build(t, `console-${run}`, { onBuildLogs: () => {} })
  built.templateId = b.templateId
  built.buildId = b.buildId
  // and a failing build through the native API (when the hub has POST /v1/templates), followed to its end
  const bad = await api('POST', '/v1/templates', { name: `console-bad-${run}`, steps: [{ run: `echo console-fail-${run}; exit 5` }] })
  if (bad.status === 202) {
    failed.templateId = bad.json.id
    failed.buildId = bad.json.buildId
    for (let i = 0; i < 600; i++) {
      const b = await api('GET', `/v1/templates/${failed.templateId}/builds/${failed.buildId}`)
      if (['ready', 'error'].includes(b.json?.status)) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  } else {
    console.log(`NOT AVAILABLE: POST /v1/templates (${bad.status})`)
  }
  const source = await createSandbox({ console: `snap-${run}` })
  const snap = await api('POST', `/v1/sandboxes/${source}/snapshots`, {})
  assert.equal(snap.status, 201, JSON.stringify(snap.json))
  snapshotId = snap.json.id
  await api('DELETE', `/v1/sandboxes/${source}`)

  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM,
    headless: true,
    // root in CI: Chromium's own sandbox needs an unprivileged user
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--window-size=1280,800'],
  })
  page = await browser.newPage()
  await page.setViewport({ width: 1280, height: 800 })
  page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`))
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`) })
})

after(async () => {
  await browser?.close()
})

test('1. sign-in: a wrong key is refused, the admin key signs in', async () => {
  const r = await page.goto(`${hub}/console/`, { waitUntil: 'load' })
  assert.equal(r.status(), 200)
  assert.match(r.headers()['content-security-policy'], /script-src 'self'/)
  await page.waitForSelector('#api-key')
  await shot('sign-in')
  await page.type('#api-key', 'e2b_not-a-key')
  await page.click('#sign-in')
  await waitText('#sign-in-error', 'not valid')
  await page.$eval('#api-key', (e) => { e.value = '' })
  await page.type('#api-key', key)
  await page.click('#sign-in')
  await page.waitForSelector('#nav a[href="#/keys"]', { visible: true, timeout: WAIT })
  // the console learns the key's role from the admin-only key list
  const role = (await missing('GET', '/v1/keys?limit=1')) ? 'key' : 'admin key'
  assert.equal(await page.$eval('#who', (e) => e.textContent), role)
  assert.equal(await page.evaluate(() => sessionStorage.getItem('agentbox.apiKey')), key)
})

test('2. clusters: the standalone cluster, connected, with the pool of base and its idle count', async () => {
  await go('#/clusters')
  if (await missing('GET', '/v1/clusters')) {
    await waitUnavailable('#clusters')
    return shot('clusters')
  }
  await page.waitForSelector(`[data-cluster="${cluster}"] [data-pool]`, { timeout: WAIT })
  const card = await page.$eval(`[data-cluster="${cluster}"]`, (e) => e.textContent)
  assert.match(card, /connected/)
  const idle = await page.$$eval(`[data-cluster="${cluster}"] tr`, (rows) => rows
    .filter((r) => r.querySelector('[data-pool]')?.textContent.includes('base'))
    .map((r) => r.querySelector('td.pool-idle').textContent))
  assert.equal(idle.length, 1, `one pool row for base: ${card}`)
  assert.match(idle[0], /^\d+$/)
  // the built template's pool is named by its alias, not the hub's built-… name
  await page.waitForSelector(`[data-cluster="${cluster}"] [data-label^="console-${run}"]`, { timeout: WAIT })
  const label = await page.$eval(`[data-cluster="${cluster}"] [data-label^="console-${run}"]`, (e) => [e.dataset.pool, e.textContent])
  assert.match(label[0], /^built-/, `the hub's name stays beside the label: ${label}`)
  assert.ok(label[1].startsWith(`console-${run}`), label[1])
  await shot('clusters')
})

let victim
let shell

test('3. sandboxes: sandboxes created through the API appear, and later ones arrive without a reload', async () => {
  victim = await createSandbox({ console: run })
  shell = await createSandbox({ console: run })
  await go('#/sandboxes')
  await page.waitForSelector(`a[href="#/sandboxes/${victim}"]`, { timeout: WAIT })
  await page.waitForSelector(`a[href="#/sandboxes/${shell}"]`, { timeout: WAIT })
  // the hub serves GET /v1/events: the console follows it (no polling) and says so
  await page.waitForFunction(() => document.getElementById('live')?.dataset.mode === 'events', { timeout: WAIT })
  assert.equal(await page.$eval('#live', (e) => e.textContent), 'live')
  const eventsBefore = Number(await page.$eval('#live', (e) => e.dataset.events || '0'))
  const late = await createSandbox({ console: run })
  await page.waitForSelector(`a[href="#/sandboxes/${late}"]`, { timeout: WAIT })
  const eventsAfter = Number(await page.$eval('#live', (e) => e.dataset.events || '0'))
  assert.ok(eventsAfter > eventsBefore, `the new sandbox came with events (${eventsBefore} → ${eventsAfter})`)
  assert.equal(await page.$eval('#live', (e) => e.dataset.mode), 'events', 'still live, never fell back to polling')
  console.log(`live updates: events (${eventsAfter - eventsBefore} while creating one sandbox)`)
  // the metadata filter narrows the list to this run's sandboxes
  await page.type('input[name="metadata"]', `console=${run}`)
  await page.$eval('input[name="metadata"]', (e) => e.dispatchEvent(new Event('change')))
  await page.waitForFunction((n) => document.querySelectorAll('#sandboxes tbody tr').length === n, { timeout: WAIT }, 3)
  await shot('sandboxes')
  // one killed through the API leaves the open page too
  assert.equal((await api('DELETE', `/v1/sandboxes/${late}`)).status, 204)
  await page.waitForFunction((id) => !document.querySelector(`a[href="#/sandboxes/${id}"]`), { timeout: WAIT }, late)
})

test('4. kill from the UI: the sandbox leaves the list and the API no longer has it', async () => {
  await page.click(`[data-kill="${victim}"]`)
  await page.click(`[data-kill="${victim}"]`)
  await page.waitForFunction((id) => !document.querySelector(`a[href="#/sandboxes/${id}"]`), { timeout: WAIT }, victim)
  const r = await api('GET', `/v1/sandboxes/${victim}`)
  assert.equal(r.status, 404, JSON.stringify(r.json))
})

test('5. terminal: a command typed in the browser runs in the sandbox and its output is in the xterm buffer', async () => {
  await go(`#/sandboxes/${shell}`)
  await waitText('#sandbox', shell)
  await page.click('#open-terminal')
  if (await missing('GET', `/v1/sandboxes/${shell}/pty`)) {
    await waitUnavailable('#terminal-status')
    return shot('sandbox-terminal')
  }
  await page.waitForSelector('#terminal[data-state="open"]', { timeout: WAIT })
  // type once the shell's prompt is there (keys typed earlier would echo before it)
  await page.waitForFunction(() => {
    const buffer = document.getElementById('terminal').xterm?.buffer.active
    for (let i = 0; buffer && i < buffer.length; i++) {
      if (/[$#] $/.test(buffer.getLine(i)?.translateToString(false).trimEnd() + ' ')) return true
    }
    return false
  }, { timeout: WAIT })
  await page.type('#terminal .xterm-helper-textarea', 'echo console-$RANDOM\r')
  const line = await page.waitForFunction(() => {
    const buffer = document.getElementById('terminal').xterm?.buffer.active
    for (let i = 0; buffer && i < buffer.length; i++) {
      const text = buffer.getLine(i)?.translateToString(true) ?? ''
      if (/^console-\d+$/.test(text.trim())) return text.trim()
    }
    return false
  }, { timeout: WAIT })
  console.log(`terminal output: ${await line.jsonValue()}`)
  await page.$eval('#terminal', (e) => e.scrollIntoView({ block: 'end' }))
  await shot('sandbox-terminal')
})

test('6. templates: the built template, its build and the build logs', async () => {
  await go('#/templates')
  if (await missing('GET', '/v1/templates')) {
    await waitUnavailable('#templates')
    await shot('templates')
    await go(`#/templates/${built.templateId}/builds/${built.buildId}`)
    await waitUnavailable('#main')
    return shot('build-logs')
  }
  await page.waitForSelector(`a[href="#/templates/${built.templateId}"]`, { timeout: WAIT })
  await waitText('#templates', `console-${run}`)
  await shot('templates')
  await go(`#/templates/${built.templateId}`)
  if (await missing('GET', `/v1/templates/${built.templateId}/builds`)) {
    await waitUnavailable('#builds')
    await go(`#/templates/${built.templateId}/builds/${built.buildId}`)
    await waitUnavailable('#main')
    return shot('build-logs')
  }
  await page.waitForSelector(`[data-build="${built.buildId}"]`, { timeout: WAIT })
  await waitText('#builds', 'ready')
  await page.click(`[data-build="${built.buildId}"]`)
  await waitText('#build-logs', `console-build-${run}`)
  await waitText('#build-status', 'ready')
  await shot('build-logs')
  if (!failed.templateId) return
  // a failed build: its error in the template's build list, its log and status on the build page
  await go(`#/templates/${failed.templateId}`)
  await page.waitForSelector(`[data-build="${failed.buildId}"]`, { timeout: WAIT })
  await waitText('#builds', 'exit status 5')
  await page.click(`[data-build="${failed.buildId}"]`)
  await waitText('#build-logs', `console-fail-${run}`)
  await waitText('#build-status', 'error')
})

test('7. snapshots: the snapshot taken through the API is listed', async () => {
  await go('#/snapshots')
  if (await missing('GET', '/v1/snapshots')) {
    await waitUnavailable('#snapshots')
    return shot('snapshots')
  }
  await page.waitForSelector(`[data-snapshot="${snapshotId}"]`, { timeout: WAIT })
  await shot('snapshots')
})

test('8. API keys as admin: the list, and a new key shown once', async () => {
  await go('#/keys')
  if (await missing('GET', '/v1/keys')) {
    await waitUnavailable('#keys')
    return shot('keys')
  }
  await page.waitForSelector('#keys tbody tr', { timeout: WAIT })
  await page.type('#main input[name="name"]', `console-${run}`)
  await page.type('#main input[name="team"]', `console-${run}`)
  await page.click('#main form button[type="submit"]')
  await page.waitForSelector('#new-key', { timeout: WAIT })
  const created = await page.$eval('#new-key', (e) => e.textContent)
  assert.ok(created.length > 10, created)
  await waitText('#keys', `console-${run}`)
  const list = await api('GET', '/v1/keys?limit=1000')
  assert.ok(JSON.stringify(list.json).includes(`console-${run}`), JSON.stringify(list.json))
  await shot('keys')
})

test('9. the pages reported no error (no CSP violation, no uncaught exception)', () => {
  // a failed call (the wrong key of step 1, a page's 404 for a sandbox just killed, the terminal's
  // 400 probe) is logged by the browser as a failed resource load: not an error of the page
  const others = pageErrors.filter((e) => !/^console: Failed to load resource: /.test(e))
  assert.deepEqual(others, [])
})
