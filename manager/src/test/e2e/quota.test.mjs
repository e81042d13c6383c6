// The unmodified E2B JS SDK against a hub where the caller's team may run one sandbox at a time
// (maxSandboxes 1, set by StandaloneQuotaSdkTest): the second create is refused with 429, which
// the SDK raises as RateLimitError carrying the hub's message; after a kill the team creates again.
// Needs E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY.
import { test } from 'node:test'
import assert from 'node:assert/strict'

const { Sandbox, RateLimitError } = await import(process.env.E2B_SDK_PACKAGE ?? 'e2b')

test('a create past the team limit raises RateLimitError; a kill frees the slot', async () => {
  const first = await Sandbox.create('base', { timeoutMs: 60_000 })
  try {
    await assert.rejects(Sandbox.create('base', { timeoutMs: 60_000 }), (e) => {
      assert.ok(e instanceof RateLimitError, `expected RateLimitError, got ${e?.name}: ${e?.message}`)
      assert.match(e.message, /maxSandboxes/)
      return true
    })
  } finally {
    await first.kill()
  }
  const again = await Sandbox.create('base', { timeoutMs: 60_000 })
  await again.kill()
})
