// Issue 37 item 10: with four tabs open (an anonymous client's quota of
// live connections), a fifth gets 429 on its WebSocket; the page says why,
// in words, where its analysis would show, on the board and the tsume page.
// Real chromium, real usid.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';

for (const [size, opts] of Object.entries(SIZES)) {
  for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
    test(`a fifth tab, refused its live connection, says why (${size}, ${lang})`, { timeout: 90_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      try {
        const { quota } = await (await fetch(`${baseURL()}/v1/limits`)).json();
        const open = [];
        for (let i = 0; i < quota.sessions; i++) {
          const p = await browser.context.newPage();
          await p.goto(`${baseURL()}/`);
          await p.waitForSelector('[data-testid="connection"][data-state="open"]', { timeout: 30_000 });
          open.push(p);
        }
        for (const path of ['/', '/tsume']) {
          const page = await browser.context.newPage();
          await page.goto(`${baseURL()}${path}`);
          const box = path === '/' ? '#analysis-error' : '[data-testid="error"]';
          await page.waitForSelector(`${box}:not([hidden])`, { timeout: 30_000 });
          const text = await page.textContent(box);
          assert.match(text, new RegExp(String(quota.sessions)), `the quota is named: ${text}`);
          assert.match(text, lang === 'ja' ? /タブを閉じて/ : /close another usid tab/, `what to do: ${text}`);
          assert.doesNotMatch(text, /too_many_requests/);
          await screenshot(page, `refused${path === '/' ? '-board' : '-tsume'}-${size}-${lang}`);
          // A tab closed: the page connects by itself and the words go.
          await open.pop().close();
          await page.waitForSelector('[data-testid="connection"][data-state="open"]', { timeout: 30_000 });
          await page.waitForSelector(`${box}[hidden]`, { state: 'attached' });
          open.push(page);
        }
        for (const p of open) await p.close();
        // The refused handshakes are logged by the browser itself.
        assert.deepEqual(takeProblems(browser.context).filter((p) => !/WebSocket/.test(p)), []);
      } finally {
        await browser.close();
      }
    });
  }
}
