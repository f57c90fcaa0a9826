// The shogi board's coordinates clear of its frame (issue 44: in Western
// notation the rank letters a–i sat half under the frame, `i` unseen), on
// the analysis board and the tsume page, at desktop and phone size: every
// rank label's glyphs lie right of the frame (the board's box-shadow) and
// inside the window.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';

// labels measures the glyphs of each coordinate (a Range around its text:
// the span may be wider than what is drawn) against the board and the
// frame its box-shadow draws around it.
async function labels(page) {
  return page.evaluate(() => {
    const board = document.querySelector('[data-testid="board"]');
    const b = board.getBoundingClientRect();
    // The frame: the widest spread of the board's box-shadows.
    const frame = Math.max(0, ...[...getComputedStyle(board).boxShadow.matchAll(/0px 0px 0px ([\d.]+)px/g)].map((m) => Number(m[1])));
    const glyphs = (sel) => [...document.querySelectorAll(`${sel} span`)].map((s) => {
      const r = document.createRange();
      r.selectNodeContents(s);
      const g = r.getBoundingClientRect();
      return { text: s.textContent, left: g.left, right: g.right, top: g.top, bottom: g.bottom, width: g.width };
    });
    return { board: { left: b.left, right: b.right, top: b.top }, frame, W: innerWidth, ranks: glyphs('.coords-ranks') };
  });
}

for (const [size, opts] of Object.entries(SIZES)) {
  for (const path of ['/', '/tsume']) {
    test(`${size} ${path}: the Western rank letters clear of the board's frame`, { timeout: 60_000 }, async () => {
      const browser = await launch({ ...opts, locale: 'en-US', notation: 'western' });
      try {
        const page = await browser.context.newPage();
        await page.goto(`${baseURL()}${path}`);
        await page.waitForSelector('.coords-ranks span');
        const m = await labels(page);
        assert.ok(m.frame >= 4, `the board has a frame (${m.frame} px)`);
        assert.deepEqual(m.ranks.map((r) => r.text), [...'abcdefghi']);
        const edge = m.board.right + m.frame;
        for (const r of m.ranks) {
          assert.ok(r.width > 0, `rank ${r.text} is drawn`);
          assert.ok(r.left >= edge - 0.5, `rank ${r.text} starts at ${r.left.toFixed(1)}, under the frame (it ends at ${edge.toFixed(1)})`);
          assert.ok(r.right <= m.W, `rank ${r.text} ends at ${r.right.toFixed(1)}, past the window (${m.W})`);
        }
        await screenshot(page, `coords-${path === '/' ? 'board' : 'tsume'}-${size}`);
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });
  }
}
