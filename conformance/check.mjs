// The conformance check: drives a real usid through Stoplight Prism's
// validating proxy and fails on any violation of openapi.yaml.
//
//   node --experimental-websocket check.mjs <proxy URL> <usid URL> <usid pid> <API key>
//
// Every request goes through the proxy, which forwards it to usid and checks
// the request and the response against the spec, reporting what deviates in
// an sl-violations header. A response violation always fails the check; a
// request violation fails it unless the case sends a bad request on purpose
// (malformed JSON, a wrong key, no handshake, ...). Each case also names the
// status it must get. The cases together must reach every status that
// openapi.yaml declares for every operation, except the few listed in
// notDriven with the reason; a status added to the spec without a case here
// fails the check too, so the spec and this list stay in step.
//
// The last cases drain the server: the check sends usid SIGTERM while a
// WebSocket search runs and checks the 503 answers of the drain window.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { parse } from 'yaml';

const [proxy, direct, pidArg, apiKey] = process.argv.slice(2);
if (!proxy || !direct || !pidArg || !apiKey) {
  console.error('usage: check.mjs <proxy URL> <usid URL> <usid pid> <API key>');
  process.exit(2);
}
const usidPID = Number(pidArg);
const spec = parse(readFileSync(new URL('../openapi.yaml', import.meta.url), 'utf8'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const example = (path, method) => spec.paths[path][method].requestBody.content['application/json'].example;
const json = { 'Content-Type': 'application/json' };
const handshake = {
  Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
};
const wrongKey = { Authorization: 'Bearer not-a-key' };
const nifu = '4k4/9/9/9/4P4/4P4/9/9/4K4 b - 1';
const tsume = example('/v1/mate', 'post').position;
// Prism drops a request whose JSON body it cannot parse without an answer,
// so bodies of other types go as text/plain: the proxy notes the content
// type (a request violation, expected) and passes it on; usid must refuse
// it (415: bodies are JSON only, so no page of another site can send one
// without a CORS preflight).
const textPlain = { 'Content-Type': 'text/plain' };
// A page of another site (403), and a Host the service does not answer to
// (421: run.sh sets server.hosts to usid.example). The proxy sends its own
// Host upstream, so 421 cases go straight to usid and their answers are
// checked here against the spec's MisdirectedRequest response.
const foreign = { Origin: 'https://evil.example' };
const rebound = { Host: 'evil.example' };
const misdirected = { headers: rebound, toUsid: 'MisdirectedRequest' };
const huge = JSON.stringify({ position: { moves: Array(20000).fill('7g7f') } }); // > 64 KiB

// Requests straight to usid, not through the proxy: the load that sets up a
// status (a spent rate, open sessions), never the request under test.
// run.sh gives the API key's client a flood guard of a search per 1000 s,
// bursts of 20, so that once spent it stays spent for the rest of the run,
// however slowly this machine runs: the 429 cases send that key; no other
// case searches with it.
const keyed = { Authorization: 'Bearer ' + apiKey };
async function spendRate() {
  // Requests refused before an engine is asked (no limits), until the flood
  // guard itself answers.
  for (let i = 0; i < 100; i++) {
    const r = await fetch(direct + '/v1/analyze', { method: 'POST', headers: { ...json, ...keyed }, body: '{}' });
    await r.arrayBuffer();
    if (r.status === 429) return;
  }
  throw new Error('the keyed flood guard never answered 429');
}

function openSocket(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + '/v1/ws');
    const events = [];
    ws.onmessage = (m) => events.push(JSON.parse(m.data));
    ws.onopen = () => resolve({ ws, events });
    ws.onerror = () => reject(new Error('WebSocket to ' + url + ' failed'));
  });
}
async function until(sock, pred, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ev = sock.events.find(pred);
    if (ev) return ev;
    await sleep(20);
  }
  throw new Error('no ' + what + ' within ' + ms + ' ms; events: ' + JSON.stringify(sock.events).slice(0, 500));
}
let held = [];
async function holdSessions() {
  // The anonymous quota allows 4 WebSocket sessions per client.
  await sleep(300); // the sessions of earlier cases are released
  held = await Promise.all([1, 2, 3, 4].map(() => openSocket(direct)));
}
async function releaseSessions() {
  for (const s of held) s.ws.close();
  held = [];
  await sleep(300);
}
let drainSocket;
async function startDrain() {
  // A bounded search in flight keeps the drain open for a few seconds:
  // usid lets it finish, and meanwhile refuses new work with 503.
  drainSocket = await openSocket(direct);
  drainSocket.ws.send(JSON.stringify({ type: 'analyze', id: 'drain', engine: 'fairy', limits: { movetime_ms: 5000 } }));
  await until(drainSocket, (e) => e.type === 'info', 10000, 'info before the drain');
  process.kill(usidPID, 'SIGTERM');
  await sleep(300);
}

// A game analysis job of the anonymous client (direct: set-up, not the
// request under test), for the cases that read or cancel one.
let gameJob = '';
async function startGameJob(limits) {
  const res = await fetch(direct + '/v1/games/analysis', {
    method: 'POST', headers: json,
    body: JSON.stringify({ position: { moves: ['7g7f', '3c3d', '2g2f', '8c8d'] }, limits }),
  });
  if (res.status !== 202) throw new Error('starting a game analysis: ' + res.status + ' ' + await res.text());
  gameJob = (await res.json()).id;
}
const gamePath = () => '/v1/games/analysis/' + gameJob;

// The ETag of an answer, fetched straight from usid (set-up), for the 304
// cases: sent back in If-None-Match while the answer is unchanged.
let etag = '';
const tagOf = (path) => async () => {
  const res = await fetch(direct + (typeof path === 'function' ? path() : path));
  await res.arrayBuffer();
  etag = res.headers.get('etag') || '';
};
async function gameJobEnded() {
  await startGameJob({ depth: 1 });
  for (let i = 0; i < 300; i++) { // an ended job no longer changes
    const j = await (await fetch(direct + gamePath())).json();
    if (j.finished_at) return tagOf(gamePath)();
    await sleep(100);
  }
  throw new Error('the game analysis did not end within 30 s');
}
const noGame = '/v1/games/analysis/00000000000000000000000000000000';

// A broadcast of the anonymous client: created by its 201 case (got sets
// the id), read, changed, watched, then ended by its DELETE case; the cases
// after that see it ended (409). Its search runs until then.
let bcast = '';
const bcPath = (tail = '') => () => '/v1/broadcasts/' + bcast + tail;
const noBroadcast = '/v1/broadcasts/00000000000000000000000000000000';
const hugeMoves = JSON.stringify({ moves: Array(20000).fill('7g7f') }); // > 64 KiB
// Viewers held straight on usid (set-up): the anonymous client may have 16.
let viewers = [];
function openViewer() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(direct.replace(/^http/, 'ws') + bcPath('/ws')());
    const events = [];
    ws.onmessage = (m) => events.push(JSON.parse(m.data));
    ws.onopen = () => resolve({ ws, events });
    ws.onerror = () => reject(new Error('viewer WebSocket failed'));
  });
}
async function holdViewers() {
  // One at a time: a viewer of an earlier case may not be given back yet
  // (its close is on its way), so a refused one is tried again.
  const end = Date.now() + 10000;
  while (viewers.length < 16) {
    try {
      viewers.push(await openViewer());
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(50);
    }
  }
}
async function releaseViewers() {
  for (const v of viewers) v.ws.close();
  viewers = [];
  await sleep(300);
}

// A match of the anonymous client: created by its 201 case (got sets the
// id), read, then cancelled by its DELETE case.
let matchID = '';
const matchPath = () => '/v1/matches/' + matchID;
const noMatch = '/v1/matches/000000000000000000000000';

// op, status, request, and bad: the request violates the spec on purpose.
const cases = [
  { op: 'get /healthz', status: 200 },
  { op: 'get /readyz', status: 200 },
  { op: 'get /metrics', status: 200 },
  { op: 'get /openapi.yaml', status: 200 },
  { op: 'get /v1/engines', status: 200 },
  { op: 'get /v1/engines', status: 200, headers: { Authorization: 'Bearer ' + apiKey }, note: 'with a key' },
  { op: 'get /v1/engines', status: 200, headers: { 'X-API-Key': apiKey }, note: 'with X-API-Key' },
  { op: 'get /v1/engines', status: 401, headers: wrongKey, bad: true },
  { op: 'get /v1/engines', status: 304, get headers() { return { 'If-None-Match': etag }; }, before: tagOf('/v1/engines'), note: 'If-None-Match of the last ETag' },
  { op: 'get /v1/engines', status: 200, headers: { Origin: 'https://usid.example' }, note: 'a page of the service' },
  { op: 'get /v1/engines', status: 403, headers: foreign },
  { op: 'get /v1/engines', status: 421, ...misdirected },
  { op: 'get /v1/limits', status: 200 },
  { op: 'get /v1/limits', status: 200, headers: { Authorization: 'Bearer ' + apiKey }, note: 'with a key' },
  { op: 'get /v1/limits', status: 401, headers: wrongKey, bad: true },
  { op: 'get /v1/limits', status: 304, get headers() { return { 'If-None-Match': etag }; }, before: tagOf('/v1/limits'), note: 'If-None-Match of the last ETag' },
  { op: 'get /v1/limits', status: 403, headers: foreign },
  { op: 'get /v1/limits', status: 421, ...misdirected },

  { op: 'post /v1/validate', status: 200, body: 'example' },
  { op: 'post /v1/validate', status: 200, body: { position: { sfen: nifu } }, note: 'an illegal position is an answer' },
  { op: 'post /v1/validate', status: 200, body: { position: { fen: '1r2k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/1R2K2R w HBhb - 0 8', variant: 'chess960', moves: ['e1h1'] }, notation: 'san' }, note: 'a Chess960 position, castling king-takes-rook' },
  { op: 'post /v1/validate', status: 415, body: '{"position":{}}', headers: textPlain, bad: true },
  { op: 'post /v1/validate', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/validate', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/validate', status: 400, body: { position: {}, extra: 1 }, bad: true },
  { op: 'post /v1/validate', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/validate', status: 413, body: huge },
  { op: 'post /v1/validate', status: 422, body: { notation: 'csa' }, bad: true },

  { op: 'post /v1/records/parse', status: 200, body: 'example' },
  { op: 'post /v1/records/parse', status: 200, body: { record: 'PI82HI22KA\n-\n-7162GI\n+7776FU\n%CHUDAN\n' }, note: 'CSA, a handicap' },
  { op: 'post /v1/records/parse', status: 200, body: { record_base64: 'juiNh4qEgUaVvY7oCiAgIDEgglaYWpXgKDc3KQo=' }, note: 'Shift_JIS bytes' },
  { op: 'post /v1/records/parse', status: 200, body: { record: '1. e4 { [%eval 0.36] [%clk 0:03:00] } e5?! (1... c5 2. Nf3 ({x} 2. c3)) 2. Nf3 $14 *' }, note: 'PGN: variations, NAGs, comment commands' },
  { op: 'post /v1/records/parse', status: 400, body: { record: '', extra: 1 }, bad: true },
  { op: 'post /v1/records/parse', status: 415, body: '{"record":""}', headers: textPlain, bad: true },
  { op: 'post /v1/records/parse', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/records/parse', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/records/parse', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/records/parse', status: 413, body: JSON.stringify({ record: 'x'.repeat(70000) }) },
  { op: 'post /v1/records/parse', status: 422, body: { record: '手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 ３五歩(33)\n' }, note: 'line and code' },

  { op: 'post /v1/records/export', status: 200, body: 'example' },
  { op: 'post /v1/records/export', status: 200, body: { sfen: '4k4/9/9/9/9/9/9/9/4K4 b G 1', plies: [{ move: 'G*5b', eval: { mate: 1 } }] }, note: 'a board diagram, a mate' },
  { op: 'post /v1/records/export', status: 200, body: { fen: 'startpos', header: { white: 'A', black: 'B' }, end: '1-0', plies: [{ move: 'e2e4', eval: { cp: 31, depth: 20 }, time_ms: 1500 }, { move: 'e7e5', eval: { mate: -3 } }] }, note: 'a chess game as PGN' },
  { op: 'post /v1/records/export', status: 422, body: { format: 'pgn', plies: [{ move: 'e2e4' }, { move: 'e2e4' }] }, note: 'an illegal chess move' },
  {
    op: 'post /v1/records/export', status: 200, note: 'a chess parse answer as it is',
    body: {
      format: 'pgn', position: { fen: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', moves: ['e2e4', 'e7e5'] }, header: { fields: [] },
      plies: [{ move: 'e2e4', san: 'e4', eval: { cp: 36 }, clock_ms: 180000 },
        { move: 'e7e5', san: 'e5', nags: [6], variations: [[{ move: 'c7c5', san: 'c5', comment_before: 'x', time_ms: 2500 }]] }],
    },
  },
  { op: 'post /v1/records/export', status: 422, body: { fen: 'startpos', plies: [{ move: 'e2e4', san: 'd4' }] }, note: 'a san naming another move: record_mismatch' },
  { op: 'post /v1/records/export', status: 400, body: { plies: [], extra: 1 }, bad: true },
  { op: 'post /v1/records/export', status: 415, body: '{"plies":[]}', headers: textPlain, bad: true },
  { op: 'post /v1/records/export', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/records/export', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/records/export', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/records/export', status: 413, body: JSON.stringify({ comment: 'x'.repeat(70000) }) },
  { op: 'post /v1/records/export', status: 422, body: { plies: [{ move: '7g7f' }, { move: '3c3e' }] }, note: 'an illegal move' },
  { op: 'post /v1/analyze', status: 200, body: 'example' },
  { op: 'post /v1/analyze', status: 200, body: { engine: 'gps', position: { sfen: 'startpos', moves: ['7g7f', '3c3d'] }, limits: { depth: 3 }, notation: 'kif' }, note: 'depth enforced by usid on gpsusi' },
  { op: 'post /v1/analyze', status: 200, body: { limits: { nodes: 20000 } }, headers: { Authorization: 'Bearer ' + apiKey }, note: 'default engine, with a key' },
  { op: 'post /v1/analyze', status: 400, body: '{"limits": {"depth": 1}, "extra": 1}', bad: true },
  { op: 'post /v1/analyze', status: 415, body: '{"limits": {"depth": 1}}', headers: textPlain, bad: true },
  { op: 'post /v1/analyze', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/analyze', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/analyze', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/analyze', status: 404, body: { engine: 'nope', limits: { depth: 1 } } },
  { op: 'post /v1/analyze', status: 413, body: huge, bad: true },
  { op: 'post /v1/analyze', status: 422, body: { position: { sfen: nifu }, limits: { depth: 1 } } },
  { op: 'post /v1/analyze', status: 422, body: { position: { moves: ['7g7f', 'P*5e'] }, limits: { depth: 1 } }, note: 'move_index' },
  { op: 'post /v1/analyze', status: 422, body: { limits: {} }, note: 'no limit' },
  { op: 'post /v1/analyze', status: 429, body: 'example', headers: keyed, before: spendRate },
  // Records take from the same rate (after every keyed case that must pass it).
  { op: 'post /v1/records/parse', status: 429, body: 'example', headers: keyed, before: spendRate },
  { op: 'post /v1/records/export', status: 429, body: 'example', headers: keyed, before: spendRate },

  { op: 'post /v1/mate', status: 200, body: 'example' },
  { op: 'post /v1/mate', status: 200, body: { engine: 'fairy', position: tsume, timeout_ms: 1000 }, note: 'notimplemented' },
  { op: 'post /v1/mate', status: 400, body: '[]', bad: true },
  { op: 'post /v1/mate', status: 415, body: '{}', headers: textPlain, bad: true },
  { op: 'post /v1/mate', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/mate', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/mate', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/mate', status: 404, body: { engine: 'nope' } },
  { op: 'post /v1/mate', status: 413, body: huge },
  { op: 'post /v1/mate', status: 422, body: { position: { sfen: nifu } } },
  { op: 'post /v1/mate', status: 429, body: 'example', headers: keyed, before: spendRate },

  { op: 'post /v1/games/analysis', status: 202, body: 'example' },
  { op: 'post /v1/games/analysis', status: 400, body: '{"limits": {"depth": 1}, "multipv": 2}', bad: true },
  { op: 'post /v1/games/analysis', status: 415, body: '{"limits": {"depth": 1}}', headers: textPlain, bad: true },
  { op: 'post /v1/games/analysis', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/games/analysis', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/games/analysis', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/games/analysis', status: 404, body: { engine: 'nope', position: {}, limits: { depth: 1 } } },
  { op: 'post /v1/games/analysis', status: 413, body: huge, bad: true },
  { op: 'post /v1/games/analysis', status: 422, body: { position: { moves: ['7g7f', 'P*5e'] }, limits: { depth: 1 } }, note: 'move_index' },
  { op: 'post /v1/games/analysis', status: 422, body: { thresholds: { inaccuracy: 0.2, mistake: 0.1, blunder: 0.3 } }, note: 'thresholds out of order (no limits: the default time per position)' },
  { op: 'post /v1/games/analysis', status: 422, body: { record: '1 ７六歩(77)\n2 ２二角成(88)\n', limits: { depth: 1 } }, note: 'bad record' },
  { op: 'post /v1/games/analysis', status: 202, body: { record: '1 ７六歩(77)\n2 ３四歩(33)\n', limits: { depth: 1 } }, note: 'from a KIF record' },
  { op: 'post /v1/games/analysis', status: 429, body: 'example', headers: keyed, before: spendRate },
  { op: 'get /v1/play/games', status: 200 },
  { op: 'get /v1/play/games', status: 401, headers: wrongKey, bad: true },
  { op: 'get /v1/play/games', status: 403, headers: foreign },
  { op: 'get /v1/play/games', status: 421, ...misdirected },
  { op: 'get /v1/games/analysis/{id}', status: 200, url: gamePath, before: () => startGameJob({ depth: 2 }) },
  { op: 'get /v1/games/analysis/{id}', status: 304, url: gamePath, get headers() { return { 'If-None-Match': etag }; }, before: gameJobEnded, note: 'If-None-Match of the last ETag' },
  { op: 'get /v1/games/analysis/{id}', status: 404, url: noGame },
  { op: 'get /v1/games/analysis/{id}', status: 401, url: gamePath, headers: wrongKey, bad: true },
  { op: 'get /v1/games/analysis/{id}', status: 403, url: gamePath, headers: foreign },
  { op: 'get /v1/games/analysis/{id}', status: 421, url: gamePath, ...misdirected },
  { op: 'delete /v1/games/analysis/{id}', status: 200, url: gamePath, before: () => startGameJob({ movetime_ms: 2000 }), note: 'cancels a running job' },
  { op: 'delete /v1/games/analysis/{id}', status: 404, url: noGame },
  { op: 'delete /v1/games/analysis/{id}', status: 401, url: gamePath, headers: wrongKey, bad: true },
  { op: 'delete /v1/games/analysis/{id}', status: 403, url: gamePath, headers: foreign },
  { op: 'delete /v1/games/analysis/{id}', status: 421, url: gamePath, ...misdirected },

  { op: 'post /v1/broadcasts', status: 201, body: 'example', got: (v) => { bcast = v.id; } },
  { op: 'post /v1/broadcasts', status: 400, body: { position: {}, extra: 1 }, bad: true },
  { op: 'post /v1/broadcasts', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/broadcasts', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/broadcasts', status: 413, body: huge, bad: true },
  { op: 'post /v1/broadcasts', status: 415, body: '{}', headers: textPlain, bad: true },
  { op: 'post /v1/broadcasts', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/broadcasts', status: 422, body: { position: { sfen: nifu } } },
  { op: 'post /v1/broadcasts', status: 429, body: 'example', headers: keyed, before: spendRate },
  { op: 'get /v1/broadcasts/{id}', status: 200, url: bcPath() },
  { op: 'get /v1/broadcasts/{id}', status: 404, url: noBroadcast },
  { op: 'get /v1/broadcasts/{id}', status: 401, url: bcPath(), headers: wrongKey, bad: true },
  { op: 'get /v1/broadcasts/{id}', status: 403, url: bcPath(), headers: foreign },
  { op: 'get /v1/broadcasts/{id}', status: 421, url: bcPath(), ...misdirected },
  { op: 'post /v1/broadcasts/{id}/moves', status: 200, url: bcPath('/moves'), body: 'example' },
  { op: 'post /v1/broadcasts/{id}/moves', status: 409, url: bcPath('/moves'), body: 'example', note: 'the same move again: another ply' },
  { op: 'post /v1/broadcasts/{id}/moves', status: 422, url: bcPath('/moves'), body: { moves: ['7g7f'] }, note: 'an illegal move' },
  { op: 'post /v1/broadcasts/{id}/moves', status: 400, url: bcPath('/moves'), body: { moves: ['2g2f'], extra: 1 }, bad: true },
  { op: 'post /v1/broadcasts/{id}/moves', status: 401, url: bcPath('/moves'), body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/broadcasts/{id}/moves', status: 403, url: bcPath('/moves'), body: 'example', headers: foreign },
  { op: 'post /v1/broadcasts/{id}/moves', status: 404, url: noBroadcast + '/moves', body: 'example' },
  { op: 'post /v1/broadcasts/{id}/moves', status: 413, url: bcPath('/moves'), body: hugeMoves, bad: true },
  { op: 'post /v1/broadcasts/{id}/moves', status: 415, url: bcPath('/moves'), body: '{"moves":["2g2f"]}', headers: textPlain, bad: true },
  { op: 'post /v1/broadcasts/{id}/moves', status: 421, url: bcPath('/moves'), body: 'example', ...misdirected },
  { op: 'post /v1/broadcasts/{id}/moves', status: 429, url: bcPath('/moves'), body: 'example', headers: keyed, before: spendRate },
  { op: 'put /v1/broadcasts/{id}/position', status: 200, url: bcPath('/position'), body: 'example' },
  { op: 'put /v1/broadcasts/{id}/position', status: 422, url: bcPath('/position'), body: { position: { sfen: nifu } } },
  { op: 'put /v1/broadcasts/{id}/position', status: 400, url: bcPath('/position'), body: { position: {}, extra: 1 }, bad: true },
  { op: 'put /v1/broadcasts/{id}/position', status: 401, url: bcPath('/position'), body: 'example', headers: wrongKey, bad: true },
  { op: 'put /v1/broadcasts/{id}/position', status: 403, url: bcPath('/position'), body: 'example', headers: foreign },
  { op: 'put /v1/broadcasts/{id}/position', status: 404, url: noBroadcast + '/position', body: 'example' },
  { op: 'put /v1/broadcasts/{id}/position', status: 413, url: bcPath('/position'), body: huge, bad: true },
  { op: 'put /v1/broadcasts/{id}/position', status: 415, url: bcPath('/position'), body: '{"position":{}}', headers: textPlain, bad: true },
  { op: 'put /v1/broadcasts/{id}/position', status: 421, url: bcPath('/position'), body: 'example', ...misdirected },
  { op: 'put /v1/broadcasts/{id}/position', status: 429, url: bcPath('/position'), body: 'example', headers: keyed, before: spendRate },
  { op: 'get /v1/broadcasts/{id}/ws', status: 101, direct: 'viewer' },
  { op: 'get /v1/broadcasts/{id}/ws', status: 426, url: bcPath('/ws'), note: 'a plain GET' },
  { op: 'get /v1/broadcasts/{id}/ws', status: 400, url: bcPath('/ws'), headers: { ...handshake, 'Sec-WebSocket-Version': '8' } },
  { op: 'get /v1/broadcasts/{id}/ws', status: 401, url: bcPath('/ws'), headers: { ...handshake, ...wrongKey }, bad: true },
  { op: 'get /v1/broadcasts/{id}/ws', status: 403, url: bcPath('/ws'), headers: { ...handshake, ...foreign } },
  { op: 'get /v1/broadcasts/{id}/ws', status: 404, url: noBroadcast + '/ws', headers: handshake },
  { op: 'get /v1/broadcasts/{id}/ws', status: 421, url: bcPath('/ws'), ...misdirected, headers: { ...handshake, ...rebound } },
  { op: 'get /v1/broadcasts/{id}/ws', status: 429, url: bcPath('/ws'), headers: handshake, before: holdViewers, after: releaseViewers },
  { op: 'delete /v1/broadcasts/{id}', status: 401, url: bcPath(), headers: wrongKey, bad: true },
  { op: 'delete /v1/broadcasts/{id}', status: 403, url: bcPath(), headers: foreign },
  { op: 'delete /v1/broadcasts/{id}', status: 403, url: bcPath(), headers: { 'X-API-Key': apiKey }, note: 'not its creator' },
  { op: 'delete /v1/broadcasts/{id}', status: 404, url: noBroadcast },
  { op: 'delete /v1/broadcasts/{id}', status: 421, url: bcPath(), ...misdirected },
  { op: 'delete /v1/broadcasts/{id}', status: 200, url: bcPath() },
  { op: 'get /v1/broadcasts/{id}/ws', status: 409, url: bcPath('/ws'), headers: handshake, note: 'ended' },
  { op: 'put /v1/broadcasts/{id}/position', status: 409, url: bcPath('/position'), body: 'example', note: 'ended' },

  { op: 'post /v1/matches', status: 201, body: 'example', got: (v) => { matchID = v.id; } },
  { op: 'post /v1/matches', status: 400, body: { players: [], extra: 1 }, bad: true },
  { op: 'post /v1/matches', status: 401, body: 'example', headers: wrongKey, bad: true },
  { op: 'post /v1/matches', status: 403, body: 'example', headers: foreign },
  { op: 'post /v1/matches', status: 404, body: { players: [{ engine: 'fairy' }, { engine: 'nobody' }], games: 2, limits: { nodes: 100 } }, note: 'an unknown engine' },
  { op: 'post /v1/matches', status: 413, body: huge, bad: true },
  { op: 'post /v1/matches', status: 415, body: '{}', headers: textPlain, bad: true },
  { op: 'post /v1/matches', status: 421, body: 'example', ...misdirected },
  { op: 'post /v1/matches', status: 422, body: { players: [{ engine: 'fairy' }, { engine: 'fairy' }], games: 2, limits: {} }, note: 'no limit' },
  { op: 'post /v1/matches', status: 429, body: 'example', headers: keyed, before: spendRate },
  { op: 'get /v1/matches/{id}', status: 200, url: matchPath },
  { op: 'get /v1/matches/{id}', status: 404, url: noMatch },
  { op: 'get /v1/matches/{id}', status: 401, url: matchPath, headers: wrongKey, bad: true },
  { op: 'get /v1/matches/{id}', status: 403, url: matchPath, headers: foreign },
  { op: 'get /v1/matches/{id}', status: 421, url: matchPath, ...misdirected },
  { op: 'get /v1/matches/{id}/games/{n}', status: 404, url: noMatch + '/games/0' },
  { op: 'get /v1/matches/{id}/games/{n}', status: 401, url: () => matchPath() + '/games/0', headers: wrongKey, bad: true },
  { op: 'get /v1/matches/{id}/games/{n}', status: 403, url: () => matchPath() + '/games/0', headers: foreign },
  { op: 'get /v1/matches/{id}/games/{n}', status: 421, url: () => matchPath() + '/games/0', ...misdirected },
  { op: 'delete /v1/matches/{id}', status: 401, url: matchPath, headers: wrongKey, bad: true },
  { op: 'delete /v1/matches/{id}', status: 403, url: matchPath, headers: foreign },
  { op: 'delete /v1/matches/{id}', status: 404, url: matchPath, headers: { 'X-API-Key': apiKey }, note: 'not its owner' },
  { op: 'delete /v1/matches/{id}', status: 404, url: noMatch },
  { op: 'delete /v1/matches/{id}', status: 421, url: matchPath, ...misdirected },
  { op: 'delete /v1/matches/{id}', status: 200, url: matchPath },
  { op: 'get /v1/matches/{id}', status: 304, url: matchPath, get headers() { return { 'If-None-Match': etag }; }, before: tagOf(matchPath), note: 'If-None-Match of the last ETag (cancelled above: it no longer changes)' },

  { op: 'post /v1/ws-ticket', status: 200, headers: { Authorization: 'Bearer ' + apiKey } },
  { op: 'post /v1/ws-ticket', status: 401, bad: true, note: 'anonymous' },
  // RFC 9110 makes the scheme case-insensitive; Prism compares it exactly
  // and flags the request, which usid rightly serves.
  { op: 'post /v1/ws-ticket', status: 200, headers: { Authorization: 'bearer ' + apiKey }, bad: true, note: 'the scheme in lower case' },
  { op: 'post /v1/ws-ticket', status: 403, headers: { Authorization: 'Bearer ' + apiKey, ...foreign } },
  { op: 'post /v1/ws-ticket', status: 421, ...misdirected },

  { op: 'get /v1/ws', status: 101, direct: true },
  { op: 'get /v1/ws', status: 426, note: 'a plain GET' },
  { op: 'get /v1/ws', status: 400, headers: { ...handshake, 'Sec-WebSocket-Version': '8' } },
  { op: 'get /v1/ws', status: 401, headers: { ...handshake, ...wrongKey }, bad: true },
  { op: 'get /v1/ws', status: 403, headers: { ...handshake, ...foreign } },
  { op: 'get /v1/ws', status: 403, headers: { ...handshake, Origin: 'http://evil.example', Host: 'evil.example' }, note: 'DNS rebinding: Origin and Host alike' },
  { op: 'get /v1/ws', status: 421, ...misdirected, headers: { ...handshake, ...rebound } },
  { op: 'get /v1/ws', status: 429, headers: handshake, before: holdSessions, after: releaseSessions },

  // Outside the spec's operations: any path, a method it does not list.
  { op: 'delete /v1/engines', status: 405, outside: 'MethodNotAllowed' },
  { op: 'get /v1/analyze', status: 405, outside: 'MethodNotAllowed' },
  { op: 'get /v1/nowhere', status: 404, outside: 'NotFound' },

  // The drain, last: usid stops after these.
  { op: 'get /readyz', status: 503, before: startDrain },
  { op: 'post /v1/analyze', status: 503, body: 'example' },
  { op: 'post /v1/mate', status: 503, body: 'example' },
  { op: 'post /v1/games/analysis', status: 503, body: 'example' },
  { op: 'get /v1/ws', status: 503, headers: handshake },
  { op: 'post /v1/broadcasts', status: 503, body: 'example' },
  { op: 'post /v1/broadcasts/{id}/moves', status: 503, url: bcPath('/moves'), body: 'example' },
  { op: 'put /v1/broadcasts/{id}/position', status: 503, url: bcPath('/position'), body: 'example' },
  { op: 'get /v1/broadcasts/{id}/ws', status: 503, url: bcPath('/ws'), headers: handshake },
  { op: 'post /v1/matches', status: 503, body: 'example' },
];

// Statuses of the spec no case here reaches, and why.
const notDriven = {
  'post /v1/analyze 502': 'needs an engine that dies mid-search; TestEngineDeathIsBadGateway (server/contract_test.go) makes one and checks the answer against openapi.yaml',
  'post /v1/validate 408': 'needs a body that stalls, which the proxy would wait for; TestTimeouts (server/timeouts_test.go) stalls one and checks the answer against openapi.yaml',
  'post /v1/analyze 408': 'as for /v1/validate: TestTimeouts',
  'post /v1/mate 408': 'as for /v1/validate: TestTimeouts',
  'post /v1/records/export 408': 'as for /v1/validate: TestRecordsBodyTimeout (server/records_test.go) stalls one and checks the answer against openapi.yaml',
  'post /v1/records/parse 408': 'as for /v1/validate: TestRecordsBodyTimeout (server/records_test.go) stalls one and checks the answer against openapi.yaml',
  'post /v1/games/analysis 408': 'as for /v1/validate: TestTimeouts',
  'post /v1/mate 502': 'needs an engine whose mate line fails verification; TestMateRoute (server/rest_test.go) makes one and checks the answer against openapi.yaml',
  'get /v1/games/analysis/{id} 503': 'needs jobs in a Redis that does not answer; TestGameStoreUnreachable (server/gamestore_test.go) makes one and checks the answer against openapi.yaml',
  'delete /v1/games/analysis/{id} 503': 'as for get: TestGameStoreUnreachable',
  'get /v1/games/analysis/{id} 429': "needs the client's flood guard of reads spent and kept spent while the proxy forwards; TestReadsAreCheap (server/reads_test.go) spends it and checks the answer against openapi.yaml",
  'get /v1/engines 429': 'as for get /v1/games/analysis/{id}: TestReadsAreCheap',
  'get /v1/limits 429': 'as for get /v1/games/analysis/{id}: TestReadsAreCheap',
  'get /v1/play/games 429': 'as for get /v1/games/analysis/{id}: the same flood guard of reads (readGuard), whose 429 TestReadsAreCheap checks',
  'get /v1/play/games 503': 'needs games in a Redis that does not answer; TestPlayGamesStoreUnreachable (server/play27_test.go) makes one and checks the answer against openapi.yaml',
  'post /v1/broadcasts 408': 'as for /v1/validate; TestBroadcastAnswersBeyondConformance (server/broadcast_test.go) stalls one and checks the answer against openapi.yaml',
  'get /v1/broadcasts/{id} 429': 'as for get /v1/games/analysis/{id}; TestBroadcastAnswersBeyondConformance spends the reads and checks the answer against openapi.yaml',
  'get /v1/broadcasts/{id} 503': 'needs broadcasts in a Redis that does not answer; TestBroadcastAnswersBeyondConformance makes one and checks every route\'s 503 against openapi.yaml',
  'delete /v1/broadcasts/{id} 503': 'as for get: TestBroadcastAnswersBeyondConformance',
  'post /v1/matches 408': 'as for /v1/validate; TestMatchAnswersBeyondConformance (server/matches_test.go) stalls one and checks the answer against openapi.yaml',
  'get /v1/matches/{id} 429': 'as for get /v1/games/analysis/{id}; TestMatchAnswersBeyondConformance spends the reads and checks the answer against openapi.yaml',
  'get /v1/matches/{id} 503': "needs matches in a Redis that does not answer; TestMatchStoreUnreachable (server/matches_test.go) makes one and checks every route's 503 against openapi.yaml (TestMatchSharedStoreDown, match/shared_test.go: the store's queue_full)",
  'delete /v1/matches/{id} 503': 'as for get: TestMatchStoreUnreachable',
  'get /v1/matches/{id}/games/{n} 503': 'as for get /v1/matches/{id}: TestMatchStoreUnreachable',
  'get /v1/matches/{id}/games/{n} 200': 'needs a game under way or ended when the proxy forwards (the first game of the example match may not have begun); TestMatchRoutes (server/matches_test.go) reads every game of a played match',
  'get /v1/matches/{id}/games/{n} 304': 'as for 200: TestMatchRoutes polls an ended game with its ETag',
  'get /v1/matches/{id}/games/{n} 429': 'as for get /v1/matches/{id}: the same flood guard of reads (readGuard), whose 429 TestReadsAreCheap checks',
};

let failures = 0;
const fail = (msg) => { failures++; console.log('  FAIL ' + msg); };
const covered = new Set();

async function runCase(c) {
  const [method, path] = c.op.split(' ');
  const name = `${c.op} → ${c.status}${c.note ? ' (' + c.note + ')' : ''}`;
  try {
    if (c.before) await c.before();
    if (c.direct === 'viewer') {
      // A viewer gets the broadcast's state at once: its position event.
      const v = await openViewer();
      await until(v, (e) => e.type === 'position' && e.id === bcast, 10000, "the broadcast's position event");
      v.ws.close();
      covered.add(`${c.op} ${c.status}`);
      console.log('  ok   ' + name);
      return;
    }
    if (c.direct) {
      // Prism proxies HTTP, not the upgrade: the 101 goes straight to usid.
      const s = await openSocket(direct);
      s.ws.send(JSON.stringify({ type: 'analyze', id: 'a1', limits: { depth: 2 } }));
      await until(s, (e) => e.id === 'a1' && e.type === 'bestmove', 20000, 'bestmove over the WebSocket');
      s.ws.close();
      covered.add(`${c.op} ${c.status}`);
      console.log('  ok   ' + name);
      return;
    }
    let body = c.body;
    if (body === 'example') body = example(path, method);
    const headers = { ...(body !== undefined ? json : {}), ...(c.headers || {}) };
    const target = typeof c.url === 'function' ? c.url() : (c.url || path); // a path with its parameters filled in
    const res = await send(method.toUpperCase(), (c.toUsid ? direct : proxy) + target, headers,
      body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
    const text = res.text;
    const violations = JSON.parse(res.headers.get('sl-violations') || '[]');
    let ok = true;
    if (res.status !== c.status) {
      fail(`${name}: got ${res.status}: ${text.slice(0, 300)}`);
      ok = false;
    }
    for (const v of violations) {
      const where = v.location.join('.');
      if (c.outside && v.message === 'Selected route not found') continue; // expected: checked below
      if (where.startsWith('request') && c.bad) continue;
      fail(`${name}: ${v.severity} at ${where}: ${v.message}`);
      ok = false;
    }
    if (c.outside || c.toUsid) ok = checkOutside(c, name, res, text) && ok;
    else if (!c.bad && !violations.length && res.status >= 400 && !res.headers.get('content-type')?.startsWith('application/problem+json')) {
      fail(`${name}: an error that is not problem JSON`);
      ok = false;
    }
    if (ok && c.got) c.got(JSON.parse(text));
    if (ok) {
      covered.add(`${c.op} ${c.status}`);
      console.log('  ok   ' + name);
    }
  } catch (err) {
    fail(`${name}: ${err.message}`);
  } finally {
    if (c.after) await c.after();
  }
}
for (const c of cases) await runCase(c);

// send makes one HTTP/1.1 request with node:http, which (unlike fetch) lets
// a client send the Connection and Upgrade headers of a WebSocket handshake.
function send(method, url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: 30000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode,
        headers: { get: (h) => res.headers[h.toLowerCase()] ?? null },
        text: Buffer.concat(chunks).toString('utf8'),
      }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('upgrade', (res, socket) => { socket.destroy(); reject(new Error('upgraded: ' + res.statusCode)); });
    req.on('error', reject);
    req.end(body);
  });
}

// checkOutside checks an answer against the response the spec describes for
// it: for a request the spec has no operation for
// (the proxy cannot), or for a request sent straight to usid (toUsid).
function checkOutside(c, name, res, text) {
  const r = spec.components.responses[c.outside || c.toUsid];
  let ok = true;
  for (const [h, def] of Object.entries(r.headers || {})) {
    if (def.required && !res.headers.get(h)) { fail(`${name}: no ${h} header`); ok = false; }
  }
  if (res.headers.get('content-type') !== 'application/problem+json') { fail(`${name}: Content-Type ${res.headers.get('content-type')}`); ok = false; }
  let p = {};
  try { p = JSON.parse(text); } catch { fail(`${name}: not JSON`); return false; }
  for (const k of spec.components.schemas.Problem.required) {
    if (!(k in p)) { fail(`${name}: problem without ${k}`); ok = false; }
  }
  if (p.status !== c.status) { fail(`${name}: problem status ${p.status}`); ok = false; }
  return ok;
}

// The drain's WebSocket client got its closing event and its result.
if (drainSocket) {
  try {
    await until(drainSocket, (e) => e.type === 'closing', 5000, 'closing event');
    await until(drainSocket, (e) => e.id === 'drain' && e.type === 'bestmove', 10000, 'the bestmove of the search in flight');
    console.log('  ok   drain: closing event, then the bestmove of the search in flight');
  } catch (err) {
    fail('drain: ' + err.message);
  }
}

// Coverage: every declared status of every operation was reached.
let declared = 0, reached = 0;
for (const [path, item] of Object.entries(spec.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (!op || !op.responses) continue; // path-level parameters, summary: not an operation
    for (const status of Object.keys(op.responses)) {
      declared++;
      const key = `${method} ${path} ${status}`;
      if (covered.has(key)) { reached++; continue; }
      if (notDriven[key]) {
        console.log(`  --   ${key}: not driven here: ${notDriven[key]}`);
        continue;
      }
      fail(`${key}: declared in openapi.yaml, reached by no passing case`);
    }
  }
}
console.log(`conformance: ${cases.length} exchanges, ${reached} of ${declared} declared responses reached, ${Object.keys(notDriven).length} left to the Go tests, ${failures} failures`);
process.exit(failures ? 1 : 0);
