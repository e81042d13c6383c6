// One build's logs, followed while the build runs: GET .../builds/{buildId}/logs?offset= returns
// the lines after offset and the build's status.
import {path} from '../api.js';
import {badge, h, replace} from '../dom.js';
import {errorNote, frame} from '../page.js';

const FOLLOW_MS = 1500;
const DONE = new Set(['ready', 'error', 'failed', 'succeeded', 'success', 'cancelled', 'unavailable']);

export function mount({api}, templateId, buildId) {
  const statusEl = h('span', {id: 'build-status'});
  const problem = h('div', {class: 'status-line'});
  const log = h('pre', {id: 'build-logs', class: 'logs'});
  let offset = 0;
  let status = null;
  let timer = null;
  let busy = false;
  let disposed = false;

  async function fetchMore() {
    if (busy || disposed) return;
    busy = true;
    try {
      const r = await api.get(path('templates', templateId, 'builds', buildId, 'logs'), {offset});
      const lines = r?.logs || [];
      const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      for (const l of lines) {
        log.append(h('span', {class: `log-line log-${String(l.level || 'info').toLowerCase()}`},
          h('span', {class: 'muted'}, l.timestamp ? `${l.timestamp} ` : ''), l.level ? `${l.level} ` : '', l.message ?? '', '\n'));
      }
      offset += lines.length;
      if (atBottom) log.scrollTop = log.scrollHeight;
      status = r?.status ?? status;
      replace(statusEl, badge(status), h('span', {class: 'muted'}, ` ${offset} lines`));
      log.dataset.lines = String(offset);
      replace(problem);
    } catch (e) {
      replace(problem, errorNote(e, 'Build logs'));
      if (e.unavailable || e.status === 404 || e.status === 403) status = 'unavailable';
    } finally {
      busy = false;
    }
    if (!disposed && !DONE.has(String(status).toLowerCase())) timer = setTimeout(fetchMore, FOLLOW_MS);
  }
  fetchMore();
  return {
    title: `Build ${buildId}`,
    el: frame(h('span', {}, 'Build ', h('span', {class: 'mono'}, buildId)), [statusEl],
      h('p', {}, 'Template ', h('a', {href: `#/templates/${encodeURIComponent(templateId)}`, class: 'mono'}, templateId)), problem, log),
    update() {},
    dispose() {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
