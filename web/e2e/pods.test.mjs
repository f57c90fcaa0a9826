// The analysis board against the production topology (issue 30): three usid
// processes sharing one real redis-server, behind a round-robin proxy that
// sends every request, and every new WebSocket, to the next process (as a
// Service without session affinity does). A board reloaded during a game
// analysis follows the job again, whichever process answers; a closed
// tab's job is cancelled by whichever process holds it, although the
// page's polls went to all three (issue 26: the board's jobs are followed);
// a game against the engine reloaded onto another process goes on there
// with its clocks.
//
// It starts its own processes: USID_BIN (run.sh exports the usid it built;
// else this test builds one) and Debian's redis-server.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, takeProblems, clickSquare } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '../..');
const GAME = fs.readFileSync(path.join(root, 'kifu/testdata/kfw-game-a.kif'), 'utf8'); // 38 moves
const REDIS = process.env.REDIS_SERVER || '/usr/bin/redis-server';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'usid-e2e-pods-'));
const procs = [];
let proxy;
let browser;
let base;
let podPorts = [];

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

function run(cmd, args, name, env = {}) {
  const log = fs.openSync(path.join(tmp, `${name}.log`), 'w');
  const p = spawn(cmd, args, { cwd: root, stdio: ['ignore', log, log], env: { ...process.env, ...env } });
  p.exited = new Promise((r) => p.on('exit', r));
  p.logName = name;
  procs.push(p);
  return p;
}

async function waitFor(what, check, ms = 240_000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ok = (url) => fetch(url).then((r) => r.ok, () => false);

// roundRobin forwards each request to the next port, and each upgrade (a
// WebSocket) to the next port after the last upgrade's (so a page's new
// WebSocket never lands where its last one did), headers untouched (usid
// sees the proxy's Host, as behind a Gateway).
function roundRobin(ports) {
  let next = 0;
  let nextWS = 0;
  const pick = () => ports[next++ % ports.length];
  const pickWS = () => ports[nextWS++ % ports.length];
  const server = http.createServer((req, res) => {
    const up = http.request({ host: '127.0.0.1', port: pick(), method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  server.on('upgrade', (req, sock, head) => {
    const up = net.connect(pickWS(), '127.0.0.1', () => {
      let lines = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      up.write(`${lines}\r\n`);
      up.write(head);
      up.pipe(sock);
      sock.pipe(up);
    });
    up.on('error', () => sock.destroy());
    sock.on('error', () => up.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

before(async () => {
  if (!fs.existsSync(REDIS)) throw new Error(`${REDIS} is missing: apt-get install -y redis-server`);
  let bin = process.env.USID_BIN;
  if (!bin) {
    bin = path.join(tmp, 'usid');
    const b = spawnSync('go', ['build', '-o', bin, './cmd/usid'], { cwd: root, stdio: 'inherit' });
    if (b.status !== 0) throw new Error('go build ./cmd/usid failed');
  }
  const redisPort = await freePort();
  run(REDIS, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmp], 'redis');
  const conf = path.join(tmp, 'usid.yaml');
  // The browser tests' configuration with its engine list replaced (a key
  // may stand once in a YAML mapping): one engine kind, on every process;
  // the file's engines add to the built-in ones, so gps is disabled.
  const shared = fs.readFileSync(path.join(here, 'testdata/usid.yaml'), 'utf8').replace(/^engines:\n(?:[ #].*\n|\n)*/m, '');
  assert.doesNotMatch(shared, /^engines:/m);
  fs.writeFileSync(conf, `${shared}
engines:
  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 2, options: {USI_Hash: 16, Threads: 1}}
  - {name: gps, disabled: true}
games:
  lease: 2s
access:
  redis: redis://127.0.0.1:${redisPort}/0
`);
  const ports = [];
  const usids = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    ports.push(port);
    usids.push(run(bin, ['--addr', `127.0.0.1:${port}`, '--config', conf], `usid${i}`, { HOME: tmp }));
  }
  for (const [i, port] of ports.entries()) {
    await waitFor(`usid on ${port} ready`, () => {
      const p = usids[i];
      if (p.exitCode !== null) throw new Error(`usid${i} exited (${p.exitCode}): ${fs.readFileSync(path.join(tmp, `${p.logName}.log`), 'utf8').slice(-2000)}`);
      return ok(`http://127.0.0.1:${port}/readyz`);
    });
  }
  podPorts = ports;
  proxy = await roundRobin(ports);
  base = `http://127.0.0.1:${proxy.address().port}`;
  browser = await launch({ width: 1280, height: 900 });
});

after(async () => {
  await browser?.close();
  proxy?.closeAllConnections();
  proxy?.close();
  for (const p of procs.reverse()) {
    if (p.exitCode === null) p.kill('SIGTERM');
    const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
    await p.exited;
    clearTimeout(t);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('a board reloaded during a game analysis shows the job\'s progress again, served by three usid behind a round-robin proxy', { timeout: 480_000 }, async () => {
  const page = await browser.context.newPage();
  await page.goto(`${base}/`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.fill('[data-testid="position-input"]', GAME);
  await page.click('[data-testid="load-position"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 38);
  await page.selectOption('[data-testid="game-limit"]', 't500');
  await page.click('[data-testid="analyse-game"]');
  const progress = () => page.evaluate(() => {
    const p = document.querySelector('[data-testid="game-progress"]');
    const box = document.querySelector('[data-testid="game-status"]');
    return { value: p.value, max: p.max, state: box.dataset.state, hidden: box.hidden };
  });
  await page.waitForFunction(() => {
    const p = document.querySelector('[data-testid="game-progress"]');
    return p.value >= 2 && p.value < p.max;
  }, null, { timeout: 200_000 });
  const before = await progress();

  await page.reload();
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 38);
  // The job's progress again, at least where it was, then to its end.
  await page.waitForFunction((n) => {
    const box = document.querySelector('[data-testid="game-status"]');
    return !box.hidden && document.querySelector('[data-testid="game-progress"]').value >= n;
  }, before.value, { timeout: 120_000 });
  const again = await progress();
  assert.equal(again.max, 39);
  assert.ok(['running', 'queued', 'done'].includes(again.state), `state after the reload: ${again.state}`);
  await page.waitForFunction(() => document.querySelector('[data-testid="game-status"]').dataset.state === 'done', null, { timeout: 240_000 });
  assert.equal(await page.locator('[data-testid="eval-graph"]').getAttribute('data-points'), '39');
  assert.match(await page.locator('[data-testid="game-progress-text"]').textContent(), /39 \/ 39/);
  assert.deepEqual(takeProblems(browser.context), [], 'the page logged errors');
  await page.close();
});

// A game against the engine through the round-robin proxy: the page's
// reload opens its WebSocket on another usid, whose play_resume takes the
// game over from the first (which hands it back: its log says so); the
// game goes on there with its moves and clocks, the engine answers there.
test('a game against the engine, reloaded onto another usid behind the round-robin proxy, goes on with its clocks', { timeout: 240_000 }, async () => {
  const page = await browser.context.newPage();
  const plays = [];
  page.on('websocket', (ws) => {
    if (!ws.url().includes('/v1/ws')) return;
    ws.on('framereceived', (f) => {
      let m;
      try { m = JSON.parse(f.payload); } catch { return; }
      if (m.type === 'play') plays.push(m.play);
    });
  });
  const handedBack = () => [0, 1, 2].filter((i) => fs.readFileSync(path.join(tmp, `usid${i}.log`), 'utf8').includes('game handed back')).length;
  assert.equal(handedBack(), 0);
  await page.goto(`${base}/`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.selectOption('[data-testid="play-side"]', 'b');
  await page.selectOption('[data-testid="play-mode"]', 'byoyomi');
  await page.fill('[data-testid="play-main-you"]', '120');
  await page.fill('[data-testid="play-extra-you"]', '1');
  await page.fill('[data-testid="play-main-engine"]', '0');
  await page.fill('[data-testid="play-extra-engine"]', '1');
  await page.selectOption('[data-testid="play-level"]', 'ms:500');
  await page.click('[data-testid="play-begin"]');
  await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
  // The human's move (a plain board move usid says is legal), then the
  // engine's answer.
  const humanMove = async (n) => {
    await page.waitForFunction(() => document.querySelector('[data-testid="clock-b"]').dataset.running === 'true' &&
      document.querySelector('.board-area').dataset.ready === 'true', null, { timeout: 60_000 });
    const st = plays[plays.length - 1];
    const v = await (await fetch(`${base}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ position: { sfen: st.sfen, moves: st.moves } }) })).json();
    const plain = v.legal_moves.filter((m) => /^[1-9][a-i][1-9][a-i]$/.test(m) && !v.legal_moves.includes(`${m}+`));
    const mv = plain[(n * 7) % plain.length];
    await clickSquare(page, mv.slice(0, 2));
    await clickSquare(page, mv.slice(2, 4));
    await waitFor('the engine\'s answer', () => plays.length && plays[plays.length - 1].moves.length === st.moves.length + 2, 60_000);
    return plays[plays.length - 1];
  };
  await humanMove(0);
  const before = await humanMove(1);
  assert.equal(before.status, 'playing');
  const seen = Date.now();

  plays.length = 0;
  await page.reload();
  await waitFor('the game resumed on another usid', () => plays.length > 0, 60_000);
  const again = plays[0];
  const elapsed = Date.now() - seen;
  assert.equal(again.game, before.game);
  assert.equal(again.status, 'playing');
  assert.deepEqual(again.moves, before.moves);
  assert.equal(again.clock.running, 'b');
  // The human's clock ran on while the page moved to another usid.
  assert.ok(again.clock.b.main_ms <= before.clock.b.main_ms && again.clock.b.main_ms >= before.clock.b.main_ms - elapsed - 500,
    `Black's clock ${again.clock.b.main_ms} ms after the reload, ${before.clock.b.main_ms} ms ${elapsed} ms before`);
  assert.deepEqual(again.clock.w, before.clock.w);
  await waitFor('a usid handing the game back', () => handedBack() === 1, 30_000);
  await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
  const after = await humanMove(2);
  assert.equal(after.status, 'playing');
  assert.equal(after.moves.length, before.moves.length + 2);
  // Resigning asks first: a second click confirms (issue 44).
  await page.click('[data-testid="play-resign"]');
  await page.click('[data-testid="play-resign"]');
  await waitFor('the end', () => plays[plays.length - 1].status === 'ended', 30_000);
  const end = plays[plays.length - 1];
  assert.equal(end.result.winner, 'w');
  assert.equal(end.result.reason, 'resign');
  assert.deepEqual(takeProblems(browser.context), [], 'the page logged errors');
  await page.close();
});

// cancelledJobs adds up, over the three processes, the game analyses each
// has ended cancelled (/metrics, asked of each one directly).
async function cancelledJobs() {
  let n = 0;
  for (const port of podPorts) {
    const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
    const m = text.match(/^usid_game_jobs_finished_total\{status="cancelled"\} (\d+)/m);
    assert.ok(m, `usid on ${port}: no usid_game_jobs_finished_total{status="cancelled"}`);
    n += Number(m[1]);
  }
  return n;
}

test('a closed tab\'s game analysis is cancelled by the process holding it, whichever took the page\'s polls', { timeout: 480_000 }, async () => {
  const page = await browser.context.newPage();
  await page.goto(`${base}/`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.fill('[data-testid="position-input"]', GAME);
  await page.click('[data-testid="load-position"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 38);
  // 2 s per position: no process's evaluation cache answers for it (the
  // test above searched 0.5 s), so the job runs for minutes.
  await page.selectOption('[data-testid="game-limit"]', 't2000');
  await page.click('[data-testid="analyse-game"]');
  await page.waitForFunction(() => {
    const p = document.querySelector('[data-testid="game-progress"]');
    return p.value >= 1 && p.value < p.max;
  }, null, { timeout: 200_000 });
  const id = await page.evaluate(() => JSON.parse(sessionStorage.getItem('usid.gamejob'))?.id);
  assert.match(id ?? '', /^[0-9a-f]{32}$/);
  // The job's end is watched on the processes' metrics: a GET of the job
  // (this test shares the page's address) would keep it alive.
  const before = await cancelledJobs();
  const closed = Date.now();
  await page.close();
  await waitFor('the closed tab\'s job to be cancelled', async () => (await cancelledJobs()) > before, 120_000);
  const after = Date.now() - closed;
  const job = await fetch(`${base}/v1/games/analysis/${id}`).then((r) => r.json());
  console.log(`# the closed tab's job: ${job.status} (${job.error?.code}) ${after} ms after the tab closed, at ${job.progress?.done}/${job.progress?.total}`);
  assert.equal(job.status, 'cancelled');
  assert.equal(job.error?.code, 'abandoned');
  assert.ok(after >= job.follow_ms - 1000, `cancelled ${after} ms after the tab closed, before its grace of ${job.follow_ms} ms`);
  assert.ok(job.progress.done < job.progress.total);
  // Requests the page had in flight when it closed were aborted: no fault of the page.
  const problems = takeProblems(browser.context).filter((p) => !/request failed: .*\/v1\/games\/analysis\/\S+ net::ERR_ABORTED/.test(p));
  assert.deepEqual(problems, [], 'the page logged errors');
});
