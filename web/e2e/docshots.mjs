// Copies the screenshots README.md and docs/*.md show from web/e2e/screenshots/ (taken
// by the tests) to docs/screenshots/, scaled down in the browser's canvas to
// stay small (no image tools needed):
//   node web/e2e/docshots.mjs   (after web/e2e/run.sh)

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { CHROMIUM, SCREENSHOTS } from './lib.mjs';

const OUT = path.join(SCREENSHOTS, '..', '..', '..', 'docs', 'screenshots');
// name -> width in pixels of the copy (phone shots are taken at 2x).
const SHOTS = {
  'board-ja-desktop': 640, 'board-ja-phone': 220, 'board-lines-desktop': 640, 'layout-phone': 220,
  'editor-board-desktop': 640, 'editor-board-phone': 220, 'tsume-ja-desktop': 640, 'tsume-ja-phone': 220,
  'tsume-try-desktop': 640, 'tsume-try-phone': 220, 'promotion-phone': 220, 'play-desktop': 640, 'play-ended-phone': 220,
  'chess-lines-en-desktop': 640, 'chess-lines-ja-phone': 220, 'chess-game-en-desktop': 640, 'othello-end-en-desktop': 640, 'othello-moves-ja-phone': 220,
  'watch-shogi-desktop-ja': 640, 'watch-chess-phone-en': 220, 'othello-lines-ja-desktop': 640,
};

fs.mkdirSync(OUT, { recursive: true });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
const page = await browser.newPage();
for (const [name, width] of Object.entries(SHOTS)) {
  const src = path.join(SCREENSHOTS, `${name}.png`);
  if (!fs.existsSync(src)) { console.error(`missing ${src}: run the tests first`); process.exitCode = 1; continue; }
  const data = `data:image/png;base64,${fs.readFileSync(src).toString('base64')}`;
  const png = await page.evaluate(async ({ data, width }) => {
    const img = new Image();
    img.src = data;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = width;
    c.height = Math.round((img.height * width) / img.width);
    const g = c.getContext('2d');
    g.imageSmoothingQuality = 'high';
    g.drawImage(img, 0, 0, c.width, c.height);
    // Fewer colours compress much better (the board's wood grain is noise).
    const px = g.getImageData(0, 0, c.width, c.height);
    for (let i = 0; i < px.data.length; i++) if (i % 4 !== 3) px.data[i] = Math.min(255, Math.round(px.data[i] / 8) * 8);
    g.putImageData(px, 0, 0);
    return c.toDataURL('image/png').split(',')[1];
  }, { data, width });
  const file = path.join(OUT, `${name}.png`);
  fs.writeFileSync(file, Buffer.from(png, 'base64'));
  console.log(`${file} ${Math.round(fs.statSync(file).size / 1024)} KB`);
}
await browser.close();
