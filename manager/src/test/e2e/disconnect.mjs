// Driven by DisconnectE2bSdkTest: what the unmodified E2B JS SDK reports when the hub or a worker
// goes away. Prints one JSON object per line; a line {"do": X} asks the driver to do X (close the
// hub, kill the worker) and the driver answers on stdin with a line once done.
// Needs E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY.
import { createInterface } from 'node:readline'
import { Sandbox } from 'e2b'

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
const out = (o) => console.log(JSON.stringify(o))
async function ask(what) {
  out({ do: what })
  await lines.next()
}
// a promise that settles while the driver acts must not reject unhandled (node would exit)
function later(promise) {
  const settled = promise.then((v) => ({ v }), (e) => ({ e }))
  return async () => {
    const r = await settled
    if (r.e) throw r.e
    return r.v
  }
}
async function failure(label, fn) {
  const t0 = Date.now()
  try {
    const r = await fn()
    out({ step: label, ok: true, value: r, ms: Date.now() - t0 })
  } catch (e) {
    out({ step: label, ok: false, name: e.constructor.name, message: String(e.message), ms: Date.now() - t0 })
  }
}

const sbx = await Sandbox.create('base', { timeoutMs: 300_000 })
out({ step: 'created', sandboxId: sbx.sandboxId })

// 1. the hub shuts down while a command streams
let running = later(sbx.commands.run('sleep 60'))
await new Promise((r) => setTimeout(r, 1500))
await ask('close-hub')
await failure('hub-shutdown-mid-command', running)
await ask('start-hub')

// 2. the worker dies (kill -9) while a command streams
running = later(sbx.commands.run('sleep 60'))
await new Promise((r) => setTimeout(r, 1500))
await ask('kill-worker')
await failure('worker-died-mid-command', running)

// 3. while the worker is away: list, getInfo, a command, a file read and a kill answer at once
await failure('list', async () => (await Sandbox.list().nextItems()).map((s) => ({ id: s.sandboxId, state: s.state })))
await failure('get-info', async () => (await sbx.getInfo()).state)
await failure('command-while-disconnected', () => sbx.commands.run('echo hi'))
await failure('read-while-disconnected', () => sbx.files.read('/etc/hostname'))
await failure('kill-while-disconnected', () => sbx.kill())
out({ step: 'done' })
process.exit(0)
