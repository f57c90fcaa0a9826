// The watch page of a broadcast (/watch/{id}) with several viewers: the
// test is the broadcaster (REST: create, moves, end), three browsers
// (separate contexts) watch. Every viewer sees the same lines; a move the
// broadcaster posts shows on every board with the new position's lines; a
// viewer who comes late has the current lines at once; the graph grows;
// a viewer steps back and returns with Live; the end is said. Shogi
// (fairy-stockfish) and chess (stockfish), at both sizes and in both
// languages. Real chromium, real usid and engines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

const GAMES = {
  shogi: {
    create: { position: { sfen: 'startpos', moves: ['7g7f'] }, engine: process.env.USID_ANALYSIS_ENGINE || 'fairy', multipv: 2, notation: 'kif' },
    next: ['3c3d', '2g2f'],
    // A piece stands on the square the move went to.
    piece: (sq) => `[data-square="${sq}"] .piece`,
  },
  chess: {
    create: { position: { fen: 'startpos', moves: ['e2e4'] }, engine: 'stockfish', multipv: 2, notation: 'san' },
    next: ['e7e5', 'g1f3'],
    piece: (sq) => `[data-square="${sq}"]:not([data-key=""])`,
  },
};

async function rest(method, path, body) {
  const res = await fetch(`${baseURL()}${path}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

// lines is what a viewer shows: the search, the ply, and each line's
// multipv, depth and moves (USI).
function lines(page) {
  return page.evaluate(() => {
    const box = document.querySelector('[data-testid="pv-lines"]');
    return {
      search: Number(box.dataset.search),
      ply: Number(box.dataset.ply),
      live: box.dataset.live === 'true',
      lines: [...box.querySelectorAll('[data-testid="pv-line"]')].map((l) => ({
        multipv: Number(l.dataset.multipv),
        depth: Number(l.dataset.depth),
        pv: [...l.querySelectorAll('[data-testid="pv-move"]')].map((m) => m.dataset.usi),
      })),
    };
  });
}

// sameLines waits until every viewer shows the same lines of one search
// newer than search after (they get the same events; between two of the
// engine's reports they agree exactly) and returns them.
async function sameLines(pages, after, timeout = 30_000) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    const all = await Promise.all(pages.map(lines));
    last = all;
    const a = JSON.stringify(all[0]);
    if (all[0].search > after && all[0].lines.length > 0 && all.every((x) => JSON.stringify(x) === a)) return all[0];
    if (Date.now() > end) assert.fail(`the viewers never showed the same lines of a search after ${after}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const graphPoints = (page) => page.evaluate(() => Number(document.querySelector('[data-testid="eval-graph"]').dataset.points));

async function openViewer(browser, id) {
  const page = await browser.context.newPage();
  await page.goto(`${baseURL()}/watch/${id}`);
  return page;
}

// The viewers' own socket is torn down when a page closes: that is no failure.
const problems = (b) => takeProblems(b.context).filter((p) => !/\/v1\/broadcasts\/[0-9a-f]+\/ws/.test(p));

for (const [size, dims] of Object.entries(SIZES)) {
  for (const lang of ['ja', 'en']) {
    test(`watch page, ${size}, ${lang}: three viewers of a shogi and a chess broadcast`, { timeout: 240_000 }, async () => {
      const locale = lang === 'ja' ? 'ja-JP' : 'en-US';
      const viewers = await Promise.all([0, 1, 2].map(() => launch({ ...dims, locale })));
      try {
        for (const [name, g] of Object.entries(GAMES)) {
          const bc = await rest('POST', '/v1/broadcasts', g.create);
          const id = bc.id;
          try {
            // Two viewers from the start.
            const [a, b] = await Promise.all(viewers.slice(0, 2).map((v) => openViewer(v, id)));
            for (const p of [a, b]) {
              await p.waitForSelector('[data-testid="watch-status"][data-state="live"]');
              assert.equal(await p.evaluate(() => document.body.dataset.game), name);
              await p.waitForSelector('[data-testid="move-list"] [data-testid="move"][data-ply="1"]');
            }
            const first = await sameLines([a, b], 0);
            assert.equal(first.ply, 1);
            assert.ok(first.lines.length >= 1 && first.lines.length <= 2, `multipv 2: ${JSON.stringify(first)}`);
            // What the viewers show is what usid says over REST.
            const rest1 = await rest('GET', `/v1/broadcasts/${id}`);
            assert.equal(rest1.status, 'live');

            // The broadcaster plays: every board shows it, with new lines.
            await rest('POST', `/v1/broadcasts/${id}/moves`, { moves: [g.next[0]], ply: 1 });
            for (const p of [a, b]) {
              await p.waitForSelector('[data-testid="move-list"] [data-testid="move"][data-ply="2"]');
              await p.waitForSelector(g.piece(g.next[0].slice(2, 4)));
            }
            const second = await sameLines([a, b], first.search);
            assert.equal(second.ply, 2);
            assert.notDeepEqual(second.lines, first.lines);
            // The graph has the first position's evaluation and the live one.
            for (const p of [a, b]) {
              await p.waitForFunction(() => Number(document.querySelector('[data-testid="eval-graph"]').dataset.points) >= 2);
            }

            // A late viewer has the current lines at once: from the page's
            // load, well before the engine's next report could matter.
            const t0 = Date.now();
            const c = await openViewer(viewers[2], id);
            await c.waitForSelector('[data-testid="pv-line"]', { timeout: 5_000 });
            const late = Date.now() - t0;
            assert.ok(late < 5_000, `late viewer's first lines after ${late} ms`);
            const before = await graphPoints(c);
            assert.ok(before >= 1, 'the late viewer has the evaluations so far');
            assert.equal((await sameLines([a, b, c], first.search)).search, second.search);

            // Viewer a steps back; the next move does not move its board,
            // Live brings it to the new position.
            await a.click('[data-testid="nav-prev"]');
            await a.waitForSelector('[data-testid="pv-lines"][data-live="false"][data-ply="1"]');
            assert.equal(await a.isEnabled('[data-testid="watch-live"]'), true);
            await rest('POST', `/v1/broadcasts/${id}/moves`, { moves: [g.next[1]], ply: 2 });
            for (const p of [a, b, c]) await p.waitForSelector('[data-testid="move-list"] [data-testid="move"][data-ply="3"]');
            assert.equal(await a.getAttribute('[data-testid="pv-lines"]', 'data-ply'), '1', 'the viewer who stepped back stays there');
            // The line shown there is in the game's notation, not the engine's moves.
            const pastMove = await a.textContent('[data-testid="pv-lines"] [data-testid="pv-move"]');
            assert.doesNotMatch(pastMove, /^[☗☖]?\S*\d[a-z]\d[a-z]|^[a-h][1-8][a-h][1-8]/, `the past line reads ${pastMove}`);
            if (name === 'shogi') await screenshot(a, `watch-behind-${size}-${lang}`);
            const third = await sameLines([b, c], second.search);
            await c.waitForFunction((n) => Number(document.querySelector('[data-testid="eval-graph"]').dataset.points) > n, before);
            await a.click('[data-testid="watch-live"]');
            await a.waitForSelector('[data-testid="pv-lines"][data-live="true"][data-ply="3"]');
            assert.equal(await a.isEnabled('[data-testid="watch-live"]'), false);
            assert.equal((await sameLines([a, b, c], second.search)).search, third.search);

            // The late viewer's first position was searched before it came
            // (its evaluation from GET, without notation): usid writes it.
            await c.click('[data-testid="nav-first"]');
            await c.click('[data-testid="nav-next"]');
            await c.waitForSelector('[data-testid="pv-lines"][data-live="false"][data-ply="1"] [data-testid="pv-move"]');
            await c.waitForFunction(() => !/^[☗☖]?\S*\d[a-z]\d[a-z]|^[a-h][1-8][a-h][1-8]/.test(document.querySelector('[data-testid="pv-move"]').textContent));
            await c.click('[data-testid="watch-live"]');
            for (const p of [a, c]) await checkLanguage(p, lang, `watch ${name} ${size}`);
            await screenshot(a, `watch-${name}-${size}-${lang}`);
            if (name === 'shogi' && size === 'desktop') await screenshot(c, `watch-late-${size}-${lang}`);
          } finally {
            await rest('DELETE', `/v1/broadcasts/${id}`);
          }
          // The end reaches every viewer; none of them tries again.
          const pages = viewers.map((v) => v.context.pages().at(-1));
          for (const p of pages) {
            await p.waitForSelector('[data-testid="watch-status"][data-state="ended"]');
            await p.waitForSelector('[data-testid="connection"][hidden]', { state: 'attached' });
          }
          if (name === 'chess') await screenshot(pages[1], `watch-ended-${size}-${lang}`);
          // Opened after the end: the game and the end, no socket.
          const after = await openViewer(viewers[0], id);
          await after.waitForSelector('[data-testid="watch-status"][data-state="ended"]');
          await after.waitForSelector('[data-testid="move-list"] [data-testid="move"][data-ply="3"]');
          assert.equal(await after.isHidden('[data-testid="connection"]'), true);
          pages.push(after);
          for (const p of pages) await p.close();
          for (const v of viewers) assert.deepEqual(problems(v), [], `${name} ${size} ${lang}: the page ran cleanly`);
        }
        // An id usid does not know is said so.
        const p = await viewers[0].context.newPage();
        await p.goto(`${baseURL()}/watch/${'0'.repeat(32)}`);
        await p.waitForSelector('[data-testid="watch-status"][data-state="notfound"]');
        await p.close();
        // The page's own GET of an unknown broadcast is a 404 by design.
        assert.deepEqual(problems(viewers[0]).filter((s) => !/404/.test(s)), []);
      } finally {
        await Promise.all(viewers.map((v) => v.close()));
      }
    });
  }
}

// --- a dropped socket and a search taken over -----------------------------

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '../..');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function waitFor(what, check, ms = 120_000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const searchShown = (page) => page.evaluate(() => {
  const box = document.querySelector('[data-testid="pv-lines"]');
  return { search: Number(box.dataset.search), lines: box.querySelectorAll('[data-testid="pv-line"]').length };
});

// Two usid on one real redis-server: the broadcast's search runs on A, the
// viewer watches through B. A is killed: B takes the search over and the
// viewer shows the new search. Then B is killed and started again on its
// port: the page's socket comes back by itself with the current lines.
test('watch page: a search taken over by another instance, a socket that drops and comes back', { timeout: 240_000 }, async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'usid-e2e-watch-'));
  const procs = [];
  const run = (cmd, args, name) => {
    const log = fs.openSync(path.join(tmp, `${name}.log`), 'w');
    const p = spawn(cmd, args, { cwd: root, stdio: ['ignore', log, log] });
    p.exited = new Promise((r) => p.on('exit', r));
    procs.push(p);
    return p;
  };
  let bin = process.env.USID_BIN;
  if (!bin) {
    bin = path.join(tmp, 'usid');
    assert.equal(spawnSync('go', ['build', '-o', bin, './cmd/usid'], { cwd: root, stdio: 'inherit' }).status, 0);
  }
  const redisPort = await freePort();
  run(process.env.REDIS_SERVER || '/usr/bin/redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmp], 'redis');
  const conf = path.join(tmp, 'usid.yaml');
  const shared = fs.readFileSync(path.join(here, 'testdata/usid.yaml'), 'utf8').replace(/^engines:\n(?:[ #].*\n|\n)*/m, '');
  fs.writeFileSync(conf, `${shared}
engines:
  - {name: fairy, path: /usr/games/fairy-stockfish, instances: 1, options: {USI_Hash: 16, Threads: 1}}
access:
  redis: redis://127.0.0.1:${redisPort}/0
`);
  const [portA, portB] = [await freePort(), await freePort()];
  const start = (port, name) => run(bin, ['--addr', `127.0.0.1:${port}`, '--config', conf], name);
  const ready = (port, p) => waitFor(`usid on ${port}`, () => {
    if (p.exitCode !== null) throw new Error(`usid on ${port} exited: ${fs.readFileSync(path.join(tmp, `${port}.log`), 'utf8').slice(-1500)}`);
    return fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
  });
  const a = start(portA, String(portA));
  let b = start(portB, String(portB));
  await ready(portA, a);
  await ready(portB, b);
  const viewer = await launch({ ...SIZES.desktop, locale: 'en-US' });
  try {
    const res = await fetch(`http://127.0.0.1:${portA}/v1/broadcasts`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ position: { sfen: 'startpos', moves: ['7g7f'] }, engine: 'fairy', notation: 'kif' }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    const { id } = await res.json();
    const page = await viewer.context.newPage();
    await page.goto(`http://127.0.0.1:${portB}/watch/${id}`);
    await page.waitForSelector('[data-testid="pv-line"]', { timeout: 30_000 });
    const first = (await searchShown(page)).search;
    assert.ok(first >= 1);

    // A, running the search, dies: B takes it over; the viewer says the
    // search was cut, then shows the new one's lines.
    a.kill('SIGKILL');
    await a.exited;
    const cut = Date.now();
    await page.waitForFunction((n) => {
      const box = document.querySelector('[data-testid="pv-lines"]');
      return Number(box.dataset.search) > n && box.querySelector('[data-testid="pv-line"]');
    }, first, { timeout: 30_000 });
    console.log(`# the viewer showed the taken-over search's lines ${Date.now() - cut} ms after A was killed`);
    const second = (await searchShown(page)).search;
    await page.waitForSelector('[data-testid="connection"][data-state="open"]');

    // B dies too: the page waits and retries; B comes back on its port
    // and the page, reconnected, shows the search running again.
    b.kill('SIGKILL');
    await b.exited;
    await page.waitForSelector('[data-testid="connection"][data-state="waiting"]');
    await page.waitForSelector('[data-testid="analysis-status"][data-state="connecting"]');
    b = start(portB, `${portB}-again`);
    await ready(portB, b);
    await page.waitForSelector('[data-testid="connection"][data-state="open"]', { timeout: 30_000 });
    await page.waitForFunction((n) => {
      const box = document.querySelector('[data-testid="pv-lines"]');
      return Number(box.dataset.search) > n && box.querySelector('[data-testid="pv-line"]');
    }, second, { timeout: 30_000 });
    // And goes on following the game.
    const moved = await fetch(`http://127.0.0.1:${portB}/v1/broadcasts/${id}/moves`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ moves: ['3c3d'], ply: 1 }),
    });
    assert.equal(moved.status, 200, await moved.text());
    await page.waitForSelector('[data-testid="move-list"] [data-testid="move"][data-ply="2"]');
    await page.waitForSelector('[data-testid="pv-lines"][data-ply="2"] [data-testid="pv-line"]', { timeout: 30_000 });
    await screenshot(page, 'watch-reconnected-desktop-en');
    // A correction (a whole new position: the second move was another,
    // and a third came): the page shows the new game, and the graph keeps
    // no evaluation of the position corrected away (ply 2 was 3c3d's).
    const fixed = await fetch(`http://127.0.0.1:${portB}/v1/broadcasts/${id}/position`, {
      method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ position: { sfen: 'startpos', moves: ['7g7f', '8c8d', '2g2f'] } }),
    });
    assert.equal(fixed.status, 200, await fixed.text());
    await page.waitForSelector('[data-testid="move-list"] [data-testid="move"][data-ply="2"][data-usi="8c8d"]');
    await page.waitForSelector('[data-testid="pv-lines"][data-ply="3"][data-live="true"] [data-testid="pv-line"]', { timeout: 30_000 });
    assert.deepEqual(await page.evaluate(() => {
      const g = document.querySelector('[data-testid="eval-graph"]').dataset;
      return [g.total, g.points];
    }), ['3', '2'], 'plies 1 and 3 evaluated, 2 not');
    // Failed reconnection attempts while no usid listened are expected,
    // and a read of the broadcast cut by the kill: depending on where the
    // kill caught the socket, Chromium names it reset, refused or (a
    // connection it was still opening) not connected.
    const cutByKill = /ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_SOCKET_NOT_CONNECTED|ERR_EMPTY_RESPONSE|ERR_CONNECTION_CLOSED/;
    const left = problems(viewer).filter((p) => !/WebSocket connection to .*\/v1\/broadcasts\/.*failed/.test(p) && !cutByKill.test(p));
    assert.deepEqual(left, []);
  } finally {
    await viewer.close();
    for (const p of procs.reverse()) {
      if (p.exitCode === null) p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
      await p.exited;
      clearTimeout(t);
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
