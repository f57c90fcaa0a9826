// REST calls to usid (same origin). Errors come back as RFC 9457 problem+json
// with a stable `code`; they are thrown as ApiError so pages can show both.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || `http_${status}`;
    this.title = problem.title || '';
    if (Number.isInteger(problem.line)) this.line = problem.line; // the record's line (records/parse)
    if (Number.isInteger(problem.move_index)) this.moveIndex = problem.move_index;
  }
}

// request is one JSON call: the answer's JSON (null for 204 No Content), or
// an ApiError.
export async function request(method, url, body) {
  return call(method, url, body);
}

async function call(method, url, body) {
  const headers = body ? { 'Content-Type': 'application/json' } : {};
  let res;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body ? JSON.stringify(body) : undefined,
      // A GET is revalidated by the browser's own cache: usid answers with
      // an ETag and "Cache-Control: private, no-cache", so polling (a game
      // analysis every half second) sends If-None-Match and an unchanged
      // answer comes back as a bodiless 304 that costs usid next to
      // nothing, handed to the page as the cached 200. (Sending our own
      // If-None-Match with no-store gave the page the 304 itself, which
      // Chromium logs as a failed request.)
      cache: method === 'GET' ? 'no-cache' : undefined,
    });
  } catch (e) {
    throw new ApiError(0, { code: 'network', detail: `usid is not reachable (${e.message})` });
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON: reported below */ }
  if (!res.ok) throw new ApiError(res.status, data && typeof data === 'object' ? data : { detail: text.slice(0, 200) });
  if (res.status === 204) return null;
  if (data === null) throw new ApiError(res.status, { code: 'bad_response', detail: 'usid sent no JSON' });
  return data;
}

// validate asks usid about a position and its moves: legality, canonical
// SFEN, legal moves and the moves in KIF notation.
// notation: the game's ('kif' for shogi, 'san' for chess; null for a game
// whose moves are their own notation).
export function validate(position, notation = 'kif') {
  return call('POST', '/v1/validate', notation ? { position, notation } : { position });
}

// parseRecord reads a game record (KIF, KI2, CSA, USI, SFEN): text as a
// string, a file as its bytes (base64; usid detects UTF-8 or Shift_JIS).
export function parseRecord({ text, bytes }) {
  if (bytes) return call('POST', '/v1/records/parse', { record_base64: toBase64(bytes) });
  return call('POST', '/v1/records/parse', { record: text });
}

// exportKIF writes a game as KIF (POST /v1/records/export); game is
// {sfen, header?, comment?, end?, plies: [{move, comment?, time_ms?, eval?, variations?}]}.
export function exportKIF(game) {
  return call('POST', '/v1/records/export', game).then((d) => d.kif ?? d.pgn);
}

export function toBase64(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let bin = '';
  for (let i = 0; i < u8.length; i += 0x8000) bin += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function engines() {
  return call('GET', '/v1/engines').then((d) => d.engines || []);
}

export function mate(position, engine, timeoutMs) {
  const body = { position, timeout_ms: timeoutMs, notation: 'kif' };
  if (engine) body.engine = engine;
  return call('POST', '/v1/mate', body);
}
