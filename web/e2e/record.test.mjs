// Issue 37 item 10, the board page: a played game's KIF names the player
// (the name given, else プレイヤー / Player, never あなた / You) and when it
// started (開始日時); the play settings survive a reload; loading a record
// asks before it drops the shown game's variations. Real chromium, real
// usid, fairy.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, openBoard, screenshot, takeProblems, SIZES } from './lib.mjs';

// Sente's king in the enemy camp with ten pieces and 28 points: a
// declaration (入玉宣言) at once ends the game.
const DECLARE = '+L+NSG1GS+N+L/4K4/PPPPPPPPP/9/9/9/9/9/4k4 b RBP 1';

async function downloadKif(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
  return fs.readFileSync(await download.path(), 'utf8');
}

for (const [size, opts] of Object.entries(SIZES)) {
  for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
    test(`a played game's KIF names the player and its start; the play settings outlive a reload (${size}, ${lang})`, { timeout: 120_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      try {
        const page = await openBoard(browser.context, `#pos=sfen_${DECLARE.replaceAll(' ', '_')}&ply=0`);
        await page.waitForSelector('[data-square="5b"] .piece[data-piece="K"][data-color="b"]');
        await page.waitForFunction(() => [...document.querySelectorAll('#play-level option')].some((o) => o.value === 'ms:100'));
        // A name only in one language's run: the other keeps the default.
        const name = lang === 'en' ? 'Hanako' : '';
        if (name) await page.fill('[data-testid="play-name"]', name);
        await page.selectOption('[data-testid="play-side"]', 'b');
        await page.selectOption('[data-testid="play-start"]', 'board');
        await page.selectOption('[data-testid="play-mode"]', 'sudden');
        await page.fill('[data-testid="play-main-you"]', '120');
        await page.fill('[data-testid="play-main-engine"]', '60');
        await page.selectOption('[data-testid="play-level"]', 'ms:100');
        const before = new Date();
        await page.click('[data-testid="play-begin"]');
        await page.waitForSelector('[data-testid="play-declare"]:not([hidden])');
        await page.click('[data-testid="play-declare"]');
        await page.waitForSelector('[data-testid="play-result"][data-reason="declaration"]');
        const kif = await downloadKif(page);
        const player = name || (lang === 'ja' ? 'プレイヤー' : 'Player');
        assert.match(kif, new RegExp(`先手：${player}\\n`), `the KIF names the player:\n${kif}`);
        assert.doesNotMatch(kif, /あなた|：You\n/, 'not "you"');
        const m = /開始日時：(\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d)\n/.exec(kif);
        assert.ok(m, `the KIF has 開始日時:\n${kif}`);
        const started = new Date(+m[1], m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
        assert.ok(Math.abs(started - before) < 60_000, `開始日時 ${m[0]} is when the game began (${before})`);
        await screenshot(page, `record-played-${size}-${lang}`);

        // The settings are there again after a reload.
        await page.reload();
        await page.waitForSelector('.board-area[data-ready="true"]');
        await page.waitForFunction(() => [...document.querySelectorAll('#play-level option')].some((o) => o.value === 'ms:100'));
        assert.equal(await page.inputValue('[data-testid="play-mode"]'), 'sudden');
        assert.equal(await page.inputValue('[data-testid="play-main-you"]'), '120');
        assert.equal(await page.inputValue('[data-testid="play-main-engine"]'), '60');
        assert.equal(await page.inputValue('[data-testid="play-level"]'), 'ms:100');
        assert.equal(await page.inputValue('[data-testid="play-start"]'), 'board');
        assert.equal(await page.inputValue('[data-testid="play-name"]'), name);
        await page.close();
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });

    test(`loading a record asks before it drops the variations (${size}, ${lang})`, { timeout: 60_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      const press = (page, sel) => (opts.mobile ? page.tap(sel) : page.click(sel));
      try {
        const page = await openBoard(browser.context, '#pos=startpos_moves_7g7f_3c3d&ply=1');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 2);
        // Another reply at ply 1: a variation.
        await press(page, '[data-square="8c"]');
        await press(page, '[data-square="8d"]');
        await page.waitForSelector('[data-testid="var-move"][data-usi="8c8d"]');
        await page.fill('[data-testid="position-input"]', 'startpos moves 2g2f 8c8d');
        // The dialog may open before the click returns: answer it at once.
        const asked = new Promise((resolve) => page.once('dialog', (d) => { resolve(d.message()); d.dismiss(); }));
        await press(page, '[data-testid="load-position"]');
        const message = await asked;
        assert.match(message, lang === 'ja' ? /変化 1 件/ : /1 variation/, `the page asks in words: ${message}`);
        // Declined: the game and its variation stay.
        await page.waitForSelector('[data-testid="var-move"][data-usi="8c8d"]');
        assert.equal(await page.locator('[data-testid="move"][data-usi="7g7f"]').count(), 1);
        // Accepted: the new record.
        page.once('dialog', (d) => d.accept());
        await press(page, '[data-testid="load-position"]');
        await page.waitForSelector('[data-testid="move"][data-usi="2g2f"]');
        assert.equal(await page.locator('[data-testid="var-move"]').count(), 0);
        await page.close();
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });
  }
}
