// The position editor of a game without hands (chess, othello), on the
// board itself: pick a piece or disc from the palette, click squares to put
// it there (the same again takes it away), choose the side to move, a
// standard start or an empty board. usid checks the position as it is built
// and its reasons are shown; Done loads it. The game module's editorSpec
// says the palette, the starts, how a click changes the position and its
// text. (Shogi has its own editor, editor.js: hands, handicaps, tsume.)

import { t } from './i18n.js';
import { escapeHtml, showErrors } from './dom.js';

export class BoardEditor {
  // board: the page's board; box: the element for the palette; mod: the
  // game module; validate(text) resolves to usid's verdict; onDone(text),
  // onCancel().
  constructor(board, box, mod, { validate, onDone, onCancel }) {
    Object.assign(this, { board, box, mod, validate, onDone, onCancel });
    this.spec = mod.editorSpec;
    this.brush = this.spec.brushes[0].brush;
    this.active = false;
    this.checks = 0;
    this.build();
    board.root.addEventListener('pointerdown', (e) => { if (this.active) this.onPress(e); });
  }

  build() {
    const e = (k) => escapeHtml(t(k));
    const side = this.mod.sideKeys();
    // Done and usid's verdict first, in sight below the board (editor.js).
    let html = '<div class="palette" data-testid="editor-palette"><div class="palette-row tools"><span class="spacer"></span>' +
      `<button type="button" data-act="cancel" data-testid="editor-cancel">${e('editor.cancel')}</button>` +
      `<button type="button" class="primary" data-act="done" data-testid="editor-done">${e('editor.done')}</button></div>` +
      '<div class="editor-check" data-testid="editor-check" data-state="idle" aria-live="polite"></div>' +
      '<div class="error-box" data-testid="editor-errors" role="alert" hidden></div>' +
      '<div class="palette-row pieces">';
    for (const b of this.spec.brushes) {
      html += `<button type="button" class="brush" data-brush="${b.brush}" data-testid="brush-${b.brush.replace(':', '-')}" title="${e(side[b.color])}">` +
        `<span class="brush-piece">${this.mod.pieceHtml(b.color, b.kind)}</span></button>`;
    }
    html += `<button type="button" class="brush eraser" data-brush="erase" title="${e('editor.remove.title')}">${e('editor.remove')}</button></div>` +
      '<div class="palette-row setup">' +
      `<select data-act="start" data-testid="editor-start" aria-label="${e('editor.start')}"><option value="">${e('editor.start')}</option>` +
      Object.keys(this.spec.starts).map((k) => `<option value="${k}">${e(k === 'empty' ? 'editor.start.empty' : 'editor.start.standard')}</option>`).join('') + '</select>' +
      `<span class="turn" role="radiogroup" aria-label="${e('editor.turn')}">` +
      ['b', 'w'].map((c) => `<button type="button" data-turn="${c}" data-testid="editor-turn-${c}">${this.mod.mark[c] || ''}${e(side[c])}</button>`).join('') +
      '</span></div></div>' +
      `<p class="editor-hint">${e(this.mod.editorHint)}</p>`;
    this.box.innerHTML = html;
    this.box.querySelector('[data-act="start"]').addEventListener('change', (ev) => {
      const k = ev.target.value;
      ev.target.value = '';
      if (!this.spec.starts[k]) return;
      const p = this.mod.parse(this.spec.starts[k]);
      this.pos.board = p.board;
      this.pos.turn = p.turn;
      this.show();
    });
    this.box.addEventListener('click', (ev) => {
      const b = ev.target.closest('button');
      if (!b) return;
      if (b.dataset.brush) { this.setBrush(b.dataset.brush); return; }
      if (b.dataset.turn) { this.pos.turn = b.dataset.turn; this.show(); return; }
      if (b.dataset.act === 'cancel') { this.stop(); this.onCancel?.(); }
      if (b.dataset.act === 'done') { const text = this.spec.text(this.pos); this.stop(); this.onDone?.(text); }
    });
    this.setBrush(this.brush);
  }

  start(pos) {
    this.pos = { ...pos, board: pos.board.slice() };
    this.active = true;
    this.box.hidden = false;
    this.board.root.classList.add('editing');
    this.board.editing = true;
    this.show();
  }

  stop() {
    this.active = false;
    this.checks++;
    clearTimeout(this.checkTimer);
    this.box.hidden = true;
    this.board.root.classList.remove('editing', 'illegal');
    this.board.editing = false;
  }

  setBrush(brush) {
    this.brush = brush;
    this.box.querySelectorAll('.brush').forEach((b) => b.classList.toggle('selected', b.dataset.brush === brush));
  }

  show() {
    this.board.setPosition(this.pos);
    this.board.setLegal([]);
    this.box.querySelectorAll('[data-turn]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.turn === this.pos.turn)));
    this.check();
  }

  // check asks usid about the position a moment after the last edit; an
  // answer about an older position is dropped.
  check() {
    const n = ++this.checks;
    const box = this.box.querySelector('[data-testid="editor-check"]');
    box.dataset.state = 'checking';
    box.textContent = t('editor.checking');
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(async () => {
      const text = this.spec.text(this.pos);
      let v;
      try { v = await this.validate(text); } catch (err) { v = { valid: false, errors: [{ code: err.code, message: err.message }] }; }
      if (n !== this.checks || !this.active) return;
      box.dataset.state = v.valid ? 'valid' : 'invalid';
      box.dataset.position = text;
      box.textContent = v.valid ? t('editor.valid') : t('editor.invalid');
      this.board.root.classList.toggle('illegal', !v.valid);
      showErrors(this.box.querySelector('[data-testid="editor-errors"]'), v.valid ? [] : v.errors || []);
      this.box.querySelector('[data-act="done"]').disabled = !v.valid;
    }, 150);
  }

  onPress(e) {
    const sq = e.target.closest('[data-square]');
    if (!sq) return;
    const i = this.board.squares.indexOf(sq);
    if (i < 0) return;
    e.preventDefault();
    this.spec.place(this.pos, i, this.brush);
    this.show();
  }
}
