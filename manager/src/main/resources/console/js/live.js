// Live updates for the page on screen. Prefers the hub's event stream GET /v1/events
// (text/event-stream: `sandbox`, `cluster`, `build` events), read with fetch so the key stays in
// the Authorization header; falls back to polling every POLL_MS when the hub has no such route.
// Either way the listener gets (topic, data): a topic of the stream, or 'tick' when polling.

export const POLL_MS = 3000;
const RECONNECT_MS = 2000;

export class Live {
  /**
   * @param api the signed-in Api
   * @param listener (topic, data) => void
   * @param status element that shows which mode is on
   */
  constructor(api, listener, status) {
    this.api = api;
    this.listener = listener;
    this.status = status;
    this.abort = new AbortController();
    this.timer = null;
    this.mode = 'starting';
  }

  start() {
    this.stream();
  }

  stop() {
    this.abort.abort();
    clearInterval(this.timer);
  }

  show(mode, title) {
    this.mode = mode;
    this.status.hidden = false;
    this.status.textContent = mode === 'events' ? 'live' : mode === 'polling' ? `polling ${POLL_MS / 1000}s` : mode;
    this.status.title = title;
    this.status.dataset.mode = mode;
  }

  poll(reason) {
    this.show('polling', `refreshing every ${POLL_MS / 1000} s (${reason})`);
    this.timer = setInterval(() => {
      if (!document.hidden) this.listener('tick', null);
    }, POLL_MS);
  }

  async stream() {
    let response;
    try {
      response = await fetch('/v1/events', {
        headers: {Authorization: `Bearer ${this.api.key}`, Accept: 'text/event-stream'},
        signal: this.abort.signal,
      });
    } catch (e) {
      if (this.abort.signal.aborted) return;
      return this.retry(`event stream failed: ${e.message}`);
    }
    const type = response.headers.get('Content-Type') || '';
    if (!response.ok || !type.startsWith('text/event-stream')) {
      response.body?.cancel();
      return this.poll(`GET /v1/events answered ${response.status}`);
    }
    this.show('events', 'updates arrive as the hub sends them (GET /v1/events)');
    // the stream was down meanwhile: whatever changed then is fetched once
    this.listener('reconnected', null);
    try {
      let received = 0;
      await readEvents(response.body, (event, data) => {
        this.status.dataset.events = String(++received); // how many arrived on this stream (tests read it)
        this.listener(event, data);
      });
    } catch (e) {
      if (this.abort.signal.aborted) return;
    }
    if (!this.abort.signal.aborted) this.retry('the event stream ended');
  }

  retry(reason) {
    this.show('reconnecting', reason);
    setTimeout(() => { if (!this.abort.signal.aborted) this.stream(); }, RECONNECT_MS);
  }
}

/** Reads a text/event-stream body, calling onEvent(eventName, parsedData) per event. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(buffer.slice(end).match(/^\r?\n\r?\n/)[0].length + end);
      let event = 'message';
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = val;
        else if (field === 'data') data.push(val);
      }
      if (!data.length) continue;
      let parsed = data.join('\n');
      try { parsed = JSON.parse(parsed); } catch { /* keep the text */ }
      onEvent(event, parsed);
    }
  }
}
