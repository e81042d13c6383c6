// Small DOM and formatting helpers. Text always goes in as text nodes (never as HTML), so values
// from the API cannot inject markup.

/**
 * Creates an element: h('a', {href: '#/x', class: 'btn', onclick: fn}, 'text', childNode, [more]).
 * Attributes starting with "on" become listeners; null/undefined/false children and attributes are skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces every child of el with the given children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** "3s ago", "in 5m", … for an RFC 3339 time; '' for none. */
export function ago(time) {
  if (!time) return '';
  const t = Date.parse(time);
  if (Number.isNaN(t)) return String(time);
  const s = Math.round((Date.now() - t) / 1000);
  const abs = Math.abs(s);
  const text = abs < 60 ? `${abs}s` : abs < 3600 ? `${Math.floor(abs / 60)}m` : abs < 86400
    ? `${Math.floor(abs / 3600)}h` : `${Math.floor(abs / 86400)}d`;
  return s >= 0 ? `${text} ago` : `in ${text}`;
}

/** A <time> showing ago(time) with the exact time as its tooltip. */
export function time(value) {
  return value ? h('time', {datetime: value, title: value}, ago(value)) : '';
}

/** 1536 → "1.5 KiB". */
export function bytes(n) {
  if (n === null || n === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** A table from rows: columns = [{title, cell: row => node|string, class?}]. */
export function table(columns, rows, empty) {
  if (!rows.length) return h('p', {class: 'empty'}, empty || 'Nothing here.');
  return h('table', {class: 'grid'},
    h('thead', {}, h('tr', {}, columns.map(c => h('th', {class: c.class}, c.title)))),
    h('tbody', {}, rows.map(r => h('tr', {}, columns.map(c => h('td', {class: c.class}, c.cell(r)))))));
}

/** A coloured badge for a state word (running, paused, ready, failed, …). */
export function badge(word) {
  if (word === null || word === undefined || word === '') return '';
  return h('span', {class: `badge badge-${String(word).replace(/[^a-z0-9_-]/gi, '')}`}, String(word));
}

/** A key/value list from [[label, value], …]. */
export function fields(pairs) {
  return h('dl', {class: 'fields'}, pairs.filter(p => p[1] !== undefined).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '')]));
}

/** A message box; kind is 'error', 'info' or 'unavailable'. */
export function note(kind, ...text) {
  return h('div', {class: `note note-${kind}`, role: kind === 'error' ? 'alert' : 'status'}, ...text);
}
