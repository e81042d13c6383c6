// The native REST API /v1 (docs/native-api.md) as the console calls it: the signed-in key goes in
// Authorization: Bearer; errors become ApiError from the native envelope
// {"error": {"code", "message", "requestId"}} (or the status alone when the body is not one).

/** An API call that answered an error status (or did not answer: status 0). */
export class ApiError extends Error {
  constructor(status, code, message, requestId) {
    super(message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }

  /** True when the hub has no such route yet (the native API still growing), not a missing resource. */
  get unavailable() {
    return this.status === 501 || this.status === 405 || (this.status === 404
      && (this.code === 'no_route' || (this.code === 'not_found' && this.message.startsWith('no route for'))));
  }
}

export class Api {
  /** @param key the API key; admin keys see every team */
  constructor(key) {
    this.key = key;
  }

  /**
   * One call. query: object of parameters (empty values dropped); body: JSON value.
   * Resolves to the parsed JSON body, or null for an empty one (204); rejects with ApiError.
   */
  async request(method, path, {query, body, signal} = {}) {
    const url = new URL(path, location.origin);
    for (const [k, v] of Object.entries(query || {})) {
      if (v !== undefined && v !== null && v !== '') url.searchParams.append(k, String(v));
    }
    const headers = {Authorization: `Bearer ${this.key}`, Accept: 'application/json'};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    for (let attempt = 1; ; attempt++) {
      try {
        response = await fetch(url, {method, headers, signal, body: body === undefined ? undefined : JSON.stringify(body)});
        break;
      } catch (e) {
        if (e.name === 'AbortError') throw e;
        // a request cut by the browser (Chromium drops requests when a network interface changes)
        // is sent again when that is safe: reads and deletes
        if (attempt < 3 && (method === 'GET' || method === 'DELETE')) {
          await new Promise(resolve => setTimeout(resolve, 250 * attempt));
          continue;
        }
        throw new ApiError(0, 'network', `cannot reach the hub: ${e.message}`);
      }
    }
    const text = await response.text();
    let json = null;
    if (text) {
      try { json = JSON.parse(text); } catch { json = null; }
    }
    if (!response.ok) throw toError(response, json, text);
    return json;
  }

  get(path, query) { return this.request('GET', path, {query}); }
  post(path, body) { return this.request('POST', path, {body: body ?? {}}); }
  del(path) { return this.request('DELETE', path); }

  /** A list route: {items, nextCursor}; a bare array is taken as one page. */
  async list(path, query) {
    const r = await this.get(path, query);
    return Array.isArray(r) ? {items: r, nextCursor: null} : {items: r?.items ?? [], nextCursor: r?.nextCursor ?? null};
  }
}

function toError(response, json, text) {
  const requestId = response.headers.get('X-Request-Id') || undefined;
  const native = json && typeof json.error === 'object' && json.error;
  if (native) {
    return new ApiError(response.status, native.code || 'error', native.message || response.statusText, native.requestId || requestId);
  }
  // not the native envelope: a route the hub does not have yet answers from the E2B surface
  const code = response.status === 404 ? 'no_route' : `http_${response.status}`;
  const message = (json && typeof json.message === 'string' && json.message) || text.slice(0, 200) || response.statusText;
  return new ApiError(response.status, code, `${response.status}: ${message}`, requestId);
}

/** "/v1/sandboxes/" + encoded segments. */
export function path(...segments) {
  return '/v1/' + segments.map(s => encodeURIComponent(s)).join('/');
}
