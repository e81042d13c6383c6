// What the pages share: a data area that reloads without overlapping itself, and error notes
// that tell a missing route ("not available on this hub") from a failed call.
import {ApiError} from './api.js';
import {h, note, replace} from './dom.js';

/**
 * Returns reload(): runs load() (which resolves to the nodes to show) and puts its result in
 * area; a reload asked for while one runs is done once after it. Failures show errorNote(e, what).
 */
export function reloader(area, what, load) {
  let running = null;
  let again = false;
  let first = true;
  return function reload() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          const nodes = await load();
          replace(area, nodes);
        } catch (e) {
          replace(area, errorNote(e, what));
        }
        if (first) {
          first = false;
          area.dataset.loaded = 'true';
        }
      } while (again);
      running = null;
    })();
    return running;
  };
}

/** A note for a failed call: 'not available' for routes the hub lacks, 'admin only' for 403. */
export function errorNote(e, what) {
  if (e instanceof ApiError && e.unavailable) {
    return note('unavailable', `${what}: not available on this hub (${e.message.replace(/\s+/g, ' ').slice(0, 160)}).`);
  }
  if (e instanceof ApiError && e.status === 403) {
    return note('unavailable', `${what}: needs an admin key.`);
  }
  return note('error', `${what}: ${e.message}`, e.requestId ? h('span', {class: 'muted'}, ` (request ${e.requestId})`) : '');
}

/** A page's frame: a heading with optional actions, then the given parts. */
export function frame(title, actions, ...parts) {
  return h('section', {class: 'page'}, h('div', {class: 'page-head'}, h('h1', {}, title), h('div', {class: 'actions'}, actions)), parts);
}

/** A button that asks once more before acting: first click arms it, second runs act(). */
export function confirmButton(label, confirmLabel, act, attrs = {}) {
  let armed = false;
  const button = h('button', {type: 'button', class: 'danger', ...attrs, onclick: async () => {
    if (!armed) {
      armed = true;
      button.textContent = confirmLabel;
      button.classList.add('armed');
      setTimeout(() => { if (armed && button.isConnected) { armed = false; button.textContent = label; button.classList.remove('armed'); } }, 5000);
      return;
    }
    armed = false;
    button.disabled = true;
    try {
      await act();
    } finally {
      button.disabled = false;
      button.textContent = label;
      button.classList.remove('armed');
    }
  }}, label);
  return button;
}
