// The console's shell: sign-in with an API key (kept in sessionStorage for this tab only), the
// navigation, a hash router (#/sandboxes, #/sandboxes/ID, …) and live updates handed to the page
// on screen.
import {Api, ApiError} from './api.js';
import {ago, h, note, replace} from './dom.js';
import {Live} from './live.js';
import * as clusters from './pages/clusters.js';
import * as sandboxes from './pages/sandboxes.js';
import * as sandbox from './pages/sandbox.js';
import * as templates from './pages/templates.js';
import * as template from './pages/template.js';
import * as build from './pages/build.js';
import * as snapshots from './pages/snapshots.js';
import * as keys from './pages/keys.js';

const KEY = 'agentbox.apiKey';
const ROLE = 'agentbox.role';

/** [hash pattern, page module, nav entry] in match order. */
const ROUTES = [
  [/^#\/clusters$/, clusters],
  [/^#\/sandboxes$/, sandboxes],
  [/^#\/sandboxes\/([^/]+)$/, sandbox],
  [/^#\/templates$/, templates],
  [/^#\/templates\/([^/]+)$/, template],
  [/^#\/templates\/([^/]+)\/builds\/([^/]+)$/, build],
  [/^#\/snapshots$/, snapshots],
  [/^#\/keys$/, keys],
];
const NAV = [['#/clusters', 'Clusters', true], ['#/sandboxes', 'Sandboxes'], ['#/templates', 'Templates'],
  ['#/snapshots', 'Snapshots'], ['#/keys', 'API keys', true]];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const signOut = document.getElementById('sign-out');
let session = null;
let current = null;

/** admin | member | unknown, from what the admin-only key list answers. */
async function roleOf(api) {
  try {
    await api.get('/v1/keys', {limit: 1});
    return 'admin';
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) return 'member';
    if (e instanceof ApiError && e.unavailable) return 'unknown';
    throw e;
  }
}

function showSignIn(message) {
  for (const el of [nav, who, signOut, document.getElementById('live')]) el.hidden = true;
  const input = h('input', {id: 'api-key', type: 'password', autocomplete: 'off', required: true, placeholder: 'e2b_…', spellcheck: 'false'});
  const error = h('div', {id: 'sign-in-error'}, message ? note('error', message) : '');
  const button = h('button', {type: 'submit', id: 'sign-in'}, 'Sign in');
  const form = h('form', {class: 'sign-in', onsubmit: async event => {
    event.preventDefault();
    button.disabled = true;
    replace(error);
    const api = new Api(input.value.trim());
    try {
      await api.list('/v1/sandboxes', {limit: 1});
      const role = await roleOf(api);
      sessionStorage.setItem(KEY, api.key);
      sessionStorage.setItem(ROLE, role);
      start(api, role);
    } catch (e) {
      replace(error, note('error', e instanceof ApiError && e.status === 401 ? 'That API key is not valid.' : e.message));
    } finally {
      button.disabled = false;
    }
  }},
  h('h1', {}, 'Sign in'),
  h('p', {}, 'Use an API key of this hub: the one ', h('code', {}, 'agentbox standalone'), ' prints as E2B_API_KEY, or one from ',
    h('code', {}, 'POST /v1/keys'), '. Admin keys see every team. The key stays in this tab only.'),
  h('label', {for: 'api-key'}, 'API key'), input, button, error);
  replace(main, form);
  input.focus();
}

function start(api, role) {
  session = {api, role, live: null};
  nav.hidden = false;
  replace(nav, NAV.filter(([, , adminOnly]) => !adminOnly || role !== 'member')
    .map(([href, label]) => h('a', {href, 'data-nav': href}, label)));
  who.hidden = false;
  who.textContent = role === 'admin' ? 'admin key' : role === 'member' ? 'team key' : 'key';
  signOut.hidden = false;
  session.live = new Live(api, (topic, data) => current?.update?.(topic, data), document.getElementById('live'));
  session.live.start();
  if (!location.hash || location.hash === '#/' || location.hash === '#') location.hash = role === 'member' ? '#/sandboxes' : '#/clusters';
  route();
}

function route() {
  if (!session) return;
  current?.dispose?.();
  current = null;
  const hash = location.hash || '#/sandboxes';
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', hash.startsWith(a.dataset.nav));
  for (const [pattern, page] of ROUTES) {
    const m = hash.match(pattern);
    if (m) {
      const params = m.slice(1).map(decodeURIComponent);
      current = page.mount({api: session.api, role: session.role}, ...params);
      replace(main, current.el);
      document.title = `${current.title} · AgentBox console`;
      return;
    }
  }
  replace(main, note('error', `No page at ${hash}.`));
}

signOut.addEventListener('click', () => {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ROLE);
  session?.live?.stop();
  current?.dispose?.();
  current = null;
  session = null;
  location.hash = '';
  showSignIn();
});
window.addEventListener('hashchange', route);
// relative times ("8s ago") move on even where the data, and so the DOM, did not change
setInterval(() => {
  for (const t of document.querySelectorAll('time[datetime]')) t.textContent = ago(t.dateTime);
}, 5000);

const saved = sessionStorage.getItem(KEY);
if (saved) start(new Api(saved), sessionStorage.getItem(ROLE) || 'unknown');
else showSignIn();
