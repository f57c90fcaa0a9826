// An engine match in the browser: a short match of fairy at full strength
// against fairy at Skill Level -20 (real usid, real engines), its first
// game followed live on the watch page (/watch/{match}/{n}: a move the
// players make appears on the board and in the move list, with the
// mover's own line), and the match page (/match/{id}) showing the score
// table, the Elo and the SPRT, and a link to every game, at both sizes in
// both languages.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

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

// The match's words that stay Latin on the Japanese page.
const TERMS = ['Elo', 'LOS', 'SPRT', 'Skill', 'Level'];

const moveCount = (page) => page.evaluate(() => document.querySelectorAll('[data-testid="move-list"] [data-ply], [data-testid="move-list"] li').length);

test('a match game watched live, the match page at both sizes in both languages', { timeout: 300_000 }, async () => {
  // Slow enough moves (400 ms) that the first game is watched while it is played.
  const { id } = await rest('POST', '/v1/matches', {
    players: [{ engine: 'fairy' }, { engine: 'fairy', options: { 'Skill Level': '-20' } }],
    games: 2, concurrency: 1, limits: { movetime_ms: 400 }, sprt: { elo0: 0, elo1: 50 },
  });
  try {
    await watchAndShow(id);
  } finally {
    // A failed test leaves no match running (the client's one place): cancel it.
    await fetch(`${baseURL()}/v1/matches/${id}`, { method: 'DELETE' }).catch(() => {});
  }
});

async function watchAndShow(id) {
  const viewer = await launch({ ...SIZES.desktop, locale: 'en-US' });
  try {
    const page = await viewer.context.newPage();
    await page.goto(`${baseURL()}/watch/${id}/0`);
    await page.waitForFunction(() => document.querySelector('[data-testid="watch-status"]').dataset.state === 'live', null, { timeout: 60_000 });
    const before = (await rest('GET', `/v1/matches/${id}/games/0`)).game.position.moves.length;
    // A move the players make after the page opened appears by itself,
    // while the game is live.
    const live = await page.waitForFunction((n) => {
      const el = document.querySelector('[data-testid="watch-status"]');
      const m = /(\d+) moves/.exec(el.textContent);
      return el.dataset.state === 'live' && m && Number(m[1]) > n ? el.textContent : null;
    }, before, { timeout: 60_000 });
    assert.match(await live.jsonValue(), /^Match game 1 — live, \d+ moves/);
    // The moves shown are the game's as usid has it (a prefix: it goes on).
    const shown = await page.evaluate(() => [...document.querySelectorAll('[data-testid="move-list"] [data-usi]')].map((e) => e.dataset.usi));
    const moves = (await rest('GET', `/v1/matches/${id}/games/0`)).game.position.moves;
    if (shown.length) assert.deepEqual(shown, moves.slice(0, shown.length));
    // One move back: the mover's own line (no search of the page's).
    await page.click('[data-testid="nav-prev"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"]').length > 0, null, { timeout: 10_000 });
    assert.match(await page.textContent('[data-testid="analysis-status"]'), /side to move's own line:[\s\S]*fairy/);
    await screenshot(page, 'match-watch-live-desktop-en');
    // The match link leads to the match page.
    assert.equal(await page.getAttribute('[data-testid="watch-match"]', 'href'), `/match/${id}`);
    // The game's end is said once it ends.
    await page.click('[data-testid="watch-live"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="watch-status"]').dataset.state === 'ended', null, { timeout: 180_000 });
    assert.match(await page.textContent('[data-testid="watch-status"]'), /ended after \d+ moves: (1\. fairy won|2\. fairy \(Skill Level -20\) won|Draw)/);
    assert.match(await page.textContent('[data-testid="analysis-status"]'), /The game is over/);
    await screenshot(page, 'match-watch-ended-desktop-en');
    assert.deepEqual(takeProblems(viewer.context), []);
  } finally {
    await viewer.close();
  }
  // The match ends (both games), then its page at both sizes in both languages.
  for (;;) {
    const m = await rest('GET', `/v1/matches/${id}`);
    if (m.status !== 'running' && m.status !== 'queued') {
      assert.equal(m.status, 'done');
      break;
    }
    await new Promise((r) => setTimeout(r, 500)); // polling the match's state, as the page does
  }
  const m = await rest('GET', `/v1/matches/${id}`);
  for (const [size, dims] of Object.entries(SIZES)) {
    for (const lang of ['ja', 'en']) {
      const b = await launch({ ...dims, locale: lang === 'ja' ? 'ja-JP' : 'en-US' });
      try {
        const page = await b.context.newPage();
        await page.goto(`${baseURL()}/match/${id}`);
        await page.waitForFunction(() => document.querySelector('[data-testid="match-status"]').dataset.state === 'done', null, { timeout: 20_000 });
        const score = await page.$$eval('[data-testid="match-score"] tbody td', (tds) => tds.map((td) => td.textContent));
        assert.deepEqual(score.slice(0, 3), [m.score.wins, m.score.draws, m.score.losses].map(String), `${size} ${lang}: the score`);
        assert.equal(score[4], '2');
        const pairs = await page.$$eval('[data-testid="match-pairs"] tbody td', (tds) => tds.map((td) => td.textContent));
        assert.deepEqual(pairs, m.pairs.map(String));
        assert.ok(!(await page.isHidden('[data-testid="match-sprt"]')), 'the SPRT is shown');
        assert.equal(await page.textContent('[data-testid="match-sprt"] [data-k="llr"]'), m.sprt.llr.toFixed(2));
        const links = await page.$$eval('[data-testid="match-watch"]', (as) => as.map((a) => a.getAttribute('href')));
        assert.deepEqual(links, [`/watch/${id}/0`, `/watch/${id}/1`]);
        assert.equal(await page.locator('[data-testid="match-record"]').count(), 2);
        const el = await page.$('[data-testid="match-games"]');
        const box = await el.boundingBox();
        assert.ok(box.x >= 0 && box.x + box.width <= dims.width + 1, `${size}: the games table fits the width (${JSON.stringify(box)})`);
        if (lang === 'ja') await checkLanguage(page, lang, `match ${size}`, TERMS);
        else {
          // (checkLanguage's English check looks for the board pages' words.)
          const text = await page.textContent('main');
          assert.match(text, /Wins[\s\S]*Elo difference[\s\S]*Decision[\s\S]*Replay/, `match ${size}: English words shown`);
          assert.doesNotMatch(text, /\bmatch\.[a-z]/, `match ${size}: catalogue keys shown instead of words`);
        }
        await screenshot(page, `match-${size}-${lang}`);
        assert.deepEqual(takeProblems(b.context), []);
      } finally {
        await b.close();
      }
    }
  }
}
