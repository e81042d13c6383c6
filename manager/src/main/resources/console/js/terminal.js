// A terminal in the browser on a sandbox's PTY: xterm.js (from its WebJar, /console/vendor/) over
// the WebSocket GET /v1/sandboxes/{id}/pty. Browsers cannot set headers on a WebSocket, so the key
// goes in ?apiKey= (the contract allows it there). Keystrokes go as binary frames (stdin), output
// arrives as binary frames, a resize is the text frame {"type":"resize","cols":N,"rows":M}; the
// socket closes when the shell exits.
import {path} from './api.js';

let vendor = null;

function script(src) {
  return new Promise((resolve, reject) => {
    const el = document.createElement('script');
    el.src = src;
    el.onload = resolve;
    el.onerror = () => reject(new Error(`cannot load ${src}`));
    document.head.append(el);
  });
}

/** Loads xterm.js and its fit addon once (they define window.Terminal and window.FitAddon). */
function loadVendor() {
  vendor ??= script('vendor/xterm.js').then(() => script('vendor/xterm-addon-fit.js'));
  return vendor;
}

/**
 * Opens a terminal on sandbox id inside host; status(message, kind) reports connection changes.
 * Resolves to {dispose()}, or null when there can be no terminal (status says why); the xterm
 * Terminal is also host.xterm (the browser test reads its buffer).
 */
export async function openTerminal(host, api, id, status) {
  const url = new URL(path('sandboxes', id, 'pty'), location.origin);
  try {
    // a plain GET tells a missing route (the WebSocket's own failure says nothing about why)
    await api.get(url.pathname);
  } catch (e) {
    if (e.unavailable) {
      status(`Terminal: not available on this hub (${e.message}).`, 'unavailable');
      return null;
    }
  }
  try {
    await loadVendor();
  } catch (e) {
    status(`Terminal unavailable: ${e.message}.`, 'error');
    return null;
  }
  const term = new window.Terminal({cursorBlink: true, fontSize: 14, scrollback: 2000,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace'});
  const fit = new window.FitAddon.FitAddon();
  term.loadAddon(fit);
  host.replaceChildren();
  term.open(host);
  fit.fit();
  host.xterm = term;

  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('apiKey', api.key);
  url.searchParams.set('cols', term.cols);
  url.searchParams.set('rows', term.rows);
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  const encoder = new TextEncoder();
  let opened = false;
  ws.onopen = () => {
    opened = true;
    host.dataset.state = 'open';
    status('');
    term.focus();
  };
  ws.onmessage = event => term.write(typeof event.data === 'string' ? event.data : new Uint8Array(event.data));
  ws.onclose = event => {
    host.dataset.state = 'closed';
    if (!opened) {
      status('The terminal could not connect: the hub refused the WebSocket (is the sandbox gone?).', 'error');
    } else {
      status(`Session ended${event.reason ? `: ${event.reason}` : ''} (code ${event.code}).`, 'info');
    }
  };
  const input = term.onData(data => {
    if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(data));
  });
  const resized = term.onResize(({cols, rows}) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({type: 'resize', cols, rows}));
  });
  const onWindowResize = () => fit.fit();
  window.addEventListener('resize', onWindowResize);
  return {
    dispose() {
      window.removeEventListener('resize', onWindowResize);
      input.dispose();
      resized.dispose();
      ws.close();
      term.dispose();
      delete host.xterm;
    },
  };
}
