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
            const third = await sameLines([b, c], second.search);
            await c.waitForFunction((n) => Number(document.querySelector('[data-testid="eval-graph"]').dataset.points) > n, before);
            await a.click('[data-testid="watch-live"]');
            await a.waitForSelector('[data-testid="pv-lines"][data-live="true"][data-ply="3"]');
            assert.equal(await a.isEnabled('[data-testid="watch-live"]'), false);
            assert.equal((await sameLines([a, b, c], second.search)).search, third.search);

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
