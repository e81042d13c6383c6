// What the pages share: a data area that reloads without overlapping itself, and error notes
// that tell a missing route ("not available on this hub") from a failed call.
import {ApiError} from './api.js';
import {h, note, replace} from './dom.js';

/**
 * Returns reload(): runs fetch() (resolves to the data to show), and when the data differs from
 * what is on screen puts render(data) in area (unchanged data leaves the DOM alone, so a poll does
 * not reset what the user is doing). A reload asked for while one runs is done once after it.
 * Failures show errorNote(e, what).
 */
export function reloader(area, what, fetch, render) {
  let running = null;
  let again = false;
  let shown;
  return function reload() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          const data = await fetch();
          const signature = JSON.stringify(data);
          if (signature !== shown) {
            replace(area, render(data));
            shown = signature;
          }
        } catch (e) {
          replace(area, errorNote(e, what));
          shown = undefined;
        }
        area.dataset.loaded = 'true';
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

/** Buttons armed by a first click, by key, until when (ms): kept across re-renders of their row. */
const armed = new Map();
const ARMED_MS = 5000;

/**
 * A button that asks once more before acting: the first click arms it (for 5 s), the second runs
 * act(). key names the action (e.g. 'kill:ID') so a re-rendered button stays armed.
 */
export function confirmButton(label, confirmLabel, act, attrs = {}, key = label) {
  const isArmed = () => (armed.get(key) ?? 0) > Date.now();
  const show = () => {
    button.textContent = isArmed() ? confirmLabel : label;
    button.classList.toggle('armed', isArmed());
  };
  const button = h('button', {type: 'button', class: 'danger', ...attrs, onclick: async () => {
    if (!isArmed()) {
      armed.set(key, Date.now() + ARMED_MS);
      show();
      setTimeout(() => { if (button.isConnected) show(); }, ARMED_MS + 50);
      return;
    }
    armed.delete(key);
    button.disabled = true;
    show();
    try {
      await act();
    } finally {
      button.disabled = false;
    }
  }}, label);
  show();
  return button;
}
