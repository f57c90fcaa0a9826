// The game being looked at: a start position and a small tree of moves (the
// main line, the game, is every node's first child; other children are
// variations), the line shown (a path from the start through the tree) and a
// cursor into it. Positions along the shown line are computed locally for
// instant navigation; everything that needs the rules — legality, legal
// moves, check, canonical SFEN, KIF notation — comes from usid
// (/v1/validate, /v1/records/parse) and is cached per position. The game's
// module (games/*.js) reads and plays its positions: SFEN and USI moves for
// shogi, FEN and UCI for chess, USI-X tokens for othello.

import { shogi } from './games/shogi.js';
import * as api from './api.js';

// A node is one move: {id, move (USI), kif, comment, timeMs, parent,
// children}, and what a record says of it besides (PGN's): before (the
// comment before a variation's first move), nags, clockMs, eval (the
// record's evaluation: {cp}|{mate}, depth). The tree's root holds no move.
function node(id, parent, move, extra = {}) {
  return {
    id, parent, move, kif: extra.kif || '', comment: extra.comment || '', timeMs: extra.timeMs ?? null,
    before: extra.before || '', nags: extra.nags || [], clockMs: extra.clockMs ?? null, eval: extra.eval || null, children: [],
  };
}

export class Game extends EventTarget {
  constructor(mod = shogi) {
    super();
    this.mod = mod;
    this.verdicts = new Map(); // key -> Promise<verdict>
    this.reset('startpos', mod.parse(mod.startText));
  }

  reset(root, rootPos, moves = [], errors = null) {
    this.root = root; // 'startpos' or a canonical position text, as sent to usid
    this.nextId = 1;
    this.nodes = new Map(); // id -> node
    this.tree = node(0, null, null);
    this.record = null; // what a loaded record says besides its moves: {format, header, comment, end}
    this.line = []; // the nodes of the shown line
    this.moves = []; // their moves (USI)
    this.positions = [rootPos];
    let n = this.tree;
    for (const m of moves) n = this.addChild(n, m);
    this.setLine(this.pathTo(n));
    this.cursor = moves.length;
    this.errors = errors; // non-null: the start position itself is illegal
  }

  addChild(parent, move, extra) {
    const n = node(this.nextId++, parent, move, extra);
    parent.children.push(n);
    this.nodes.set(n.id, n);
    return n;
  }

  // setLine shows the line of nodes, keeping the positions it shares with
  // the line shown before.
  setLine(nodes) {
    let i = 0;
    while (i < nodes.length && i < this.line.length && nodes[i] === this.line[i]) i++;
    this.positions.length = i + 1;
    for (let j = i; j < nodes.length; j++) this.positions.push(this.mod.apply(this.positions[j], nodes[j].move));
    this.line = nodes;
    this.moves = nodes.map((n) => n.move);
  }

  // pathTo is the line from the start to n; lineThrough goes on from n
  // along first children (the line's own continuation).
  pathTo(n) {
    const out = [];
    for (let p = n; p && p.parent; p = p.parent) out.push(p);
    return out.reverse();
  }

  lineThrough(n) {
    const out = this.pathTo(n);
    for (let p = n.children[0]; p; p = p.children[0]) out.push(p);
    return out;
  }

  mainLine() { return this.lineThrough(this.tree); }

  // branchPly is the number of moves the shown line shares with the main
  // line: equal to the length when the shown line is the main line.
  branchPly() {
    for (let i = 0; i < this.line.length; i++) {
      const n = this.line[i];
      if (n.parent.children[0] !== n) return i;
    }
    return this.line.length;
  }

  get onMainLine() { return this.branchPly() === this.line.length; }
  get length() { return this.line.length; }
  get kif() { return this.line.map((n) => n.kif); }
  get position() { return this.positions[this.cursor]; }
  get legalPosition() { return !this.errors; }
  get node() { return this.cursor > 0 ? this.line[this.cursor - 1] : this.tree; }

  // agrees tells whether the shown position is the one usid reports (board,
  // side to move and hands; the move number may be counted differently).
  agrees(text) {
    return this.mod.sameHead(this.mod.toText(this.position), text);
  }

  replacePosition(pos) { this.positions[this.cursor] = pos; }

  lastMove(ply = this.cursor) { return ply > 0 ? this.moves[ply - 1] : null; }

  // positionAt is the JSON position usid wants for the position after ply moves.
  positionAt(ply = this.cursor) {
    return { [this.mod.field]: this.root, moves: this.moves.slice(0, ply) };
  }

  key(ply = this.cursor) {
    return `${this.root}|${this.moves.slice(0, ply).join(' ')}`;
  }

  // keyBefore is the key of the position a node's move was played from.
  keyBefore(n) {
    return `${this.root}|${this.pathTo(n).slice(0, -1).map((p) => p.move).join(' ')}`;
  }

  usi(ply = this.cursor) { return this.mod.positionText(this.root, this.moves.slice(0, ply)); }

  // verdict asks usid about the position after ply moves, once per position.
  verdict(ply = this.cursor) {
    return this.verdictOf(this.positionAt(ply), this.key(ply));
  }

  verdictOf(position, key = `${position[this.mod.field]}|${position.moves.join(' ')}`) {
    let v = this.verdicts.get(key);
    if (!v) {
      v = api.validate(position, this.mod.notation);
      v.catch(() => this.verdicts.delete(key)); // let a failed request be retried
      this.verdicts.set(key, v);
      if (this.verdicts.size > 2000) this.verdicts.delete(this.verdicts.keys().next().value);
    }
    return v;
  }

  emit(what) { this.dispatchEvent(new CustomEvent('change', { detail: { what } })); }

  goto(ply) {
    ply = Math.max(0, Math.min(this.line.length, ply));
    if (ply === this.cursor) return;
    this.cursor = ply;
    this.emit('cursor');
  }

  // select shows the line through a node of the tree, at that node.
  select(id) {
    const n = this.nodes.get(id);
    if (!n) return;
    const ply = this.pathTo(n).length;
    if (this.line[ply - 1] === n) { this.goto(ply); return; }
    this.setLine(this.lineThrough(n));
    this.cursor = ply;
    this.emit('line');
    this.refreshKif();
  }

  // backToMain shows the main line again, at the move the shown line left it.
  backToMain() {
    const at = this.branchPly();
    if (at === this.line.length) return;
    this.setLine(this.mainLine());
    this.cursor = Math.min(at + 1, this.line.length);
    this.emit('line');
  }

  // branchNode is the first node of the shown line that is not its
  // parent's first child (where the shown variation leaves its parent
  // line), or null on the main line.
  branchNode() {
    return this.line.find((n) => n.parent.children[0] !== n) || null;
  }

  // deleteVariation removes the shown variation (from where it leaves the
  // main line) and shows the main line at that point.
  deleteVariation() {
    const b = this.branchNode();
    if (!b) return;
    const ply = this.pathTo(b).length - 1;
    const drop = (n) => { this.nodes.delete(n.id); n.children.forEach(drop); };
    b.parent.children.splice(b.parent.children.indexOf(b), 1);
    drop(b);
    this.setLine(this.mainLine());
    this.cursor = Math.min(ply, this.line.length);
    this.emit('line');
  }

  // promoteVariation makes the shown variation the main line (the old main
  // line becomes its first variation).
  promoteVariation() {
    const b = this.branchNode();
    if (!b) return;
    const sib = b.parent.children;
    sib.splice(sib.indexOf(b), 1);
    sib.unshift(b);
    this.emit('line');
  }

  // play adds a move at the cursor. The line's next move just steps
  // forward, as does a move the tree already has there; any other move
  // opens a variation (or extends the line at its end) and never deletes
  // moves.
  play(usi) { this.playLine([usi]); }

  playLine(list) {
    let changed = false;
    for (const usi of list) {
      const next = this.line[this.cursor];
      if (next && next.move === usi) { this.cursor++; continue; }
      const parent = this.node;
      const child = parent.children.find((c) => c.move === usi) || this.addChild(parent, usi);
      this.setLine(this.lineThrough(child));
      this.cursor++;
      changed = true;
    }
    this.emit(changed ? 'line' : 'cursor');
    if (changed) this.refreshKif();
  }

  // refreshKif fetches the KIF of the whole shown line (one request) for
  // the moves that lack it and sends a 'kif' change when it arrives.
  async refreshKif() {
    const field = this.mod.notationField;
    if (!field || this.line.every((n) => n.kif)) return;
    const nodes = this.line;
    const v = await this.verdictOf(this.positionAt(nodes.length), this.key(nodes.length));
    if (Array.isArray(v[field])) nodes.forEach((n, i) => { if (v[field][i]) n.kif = v[field][i]; });
    this.emit('kif');
    return v;
  }

  // load validates and installs a start position and moves. It resolves to
  // {ok: true} or {ok: false, errors, kept} where kept is how many moves were
  // legal and are shown (the position before the refused move).
  async load(text, moves) {
    const { field, startText } = this.mod;
    const v0 = await api.validate({ [field]: text, moves: [] }, this.mod.notation);
    if (!v0.valid) {
      let pos = null;
      try { pos = v0[field] ? this.mod.parse(v0[field]) : null; } catch { pos = null; }
      if (pos) { this.reset(v0[field], pos, [], v0.errors); this.emit('load'); }
      return { ok: false, errors: v0.errors || [], shown: !!pos };
    }
    const root = text === 'startpos' || v0[field] === startText ? 'startpos' : v0[field];
    const rootPos = this.mod.parse(v0[field]);
    let result = { ok: true };
    if (moves.length) {
      const v = await api.validate({ [field]: root, moves }, this.mod.notation);
      if (!v.valid) {
        const bad = (v.errors || []).find((e) => typeof e.move_index === 'number');
        moves = bad ? moves.slice(0, bad.move_index) : [];
        result = { ok: false, errors: v.errors || [], shown: true, kept: moves.length };
      }
    }
    this.reset(root, rootPos, moves);
    this.emit('load');
    this.refreshKif();
    return result;
  }

  // loadRecord installs a record as POST /v1/records/parse answers it
  // (usid checked every move of every line): the main line with its
  // variations, comments and times, shown from the start.
  loadRecord(rec) {
    const text = rec.position[this.mod.field];
    this.reset(text === this.mod.startText || text === 'startpos' ? 'startpos' : text, this.mod.parse(text));
    const nf = this.mod.plyField;
    const grow = (parent, plies) => {
      let p = parent;
      for (const ply of plies) {
        const n = this.addChild(p, ply.move, {
          kif: nf ? ply[nf] : '', comment: ply.comment, timeMs: ply.time_ms,
          before: ply.comment_before, nags: ply.nags, clockMs: ply.clock_ms, eval: ply.eval,
        });
        for (const v of ply.variations || []) grow(p, v);
        p = n;
      }
    };
    grow(this.tree, rec.plies);
    this.record = { format: rec.format, header: rec.header || { fields: [] }, comment: rec.comment || '', end: rec.end || '' };
    this.setLine(this.mainLine());
    this.cursor = 0;
    this.emit('load');
  }
}
