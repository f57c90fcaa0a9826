// REST calls to usid (same origin). Errors come back as RFC 9457 problem+json
// with a stable `code`; they are thrown as ApiError so pages can show both.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || `http_${status}`;
    this.title = problem.title || '';
  }
}

async function call(method, url, body) {
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (e) {
    throw new ApiError(0, { code: 'network', detail: `usid is not reachable (${e.message})` });
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON: reported below */ }
  if (!res.ok) throw new ApiError(res.status, data && typeof data === 'object' ? data : { detail: text.slice(0, 200) });
  if (data === null) throw new ApiError(res.status, { code: 'bad_response', detail: 'usid sent no JSON' });
  return data;
}

// validate asks usid about a position and its moves: legality, canonical
// SFEN, legal moves and the moves in KIF notation.
export function validate(position) {
  return call('POST', '/v1/validate', { position, notation: 'kif' });
}

export function engines() {
  return call('GET', '/v1/engines').then((d) => d.engines || []);
}

export function mate(position, engine, timeoutMs) {
  const body = { position, timeout_ms: timeoutMs, notation: 'kif' };
  if (engine) body.engine = engine;
  return call('POST', '/v1/mate', body);
}
