// Whole-game analysis on usid: POST /v1/games/analysis starts a job, GET
// /v1/games/analysis/{id} reports its progress and the positions done so
// far, DELETE cancels it. This module is the only one that knows those
// routes and field names: normalizeJob turns an answer into what the page
// uses, so a change of the contract is a change here.
//
// Answer (contract): {id, status: queued|running|paused|done|cancelled|failed,
// progress: {done, total, estimated_left_ms?}, positions: [{ply, eval: {cp}|{mate} (Black's
// side), bestmove, pv, depth, move (the move played from this position),
// loss (drop of 2·winrate−1, 0..2), judgement: inaccuracy|mistake|blunder|ok},
// null while not analysed], summary}.

export const JUDGEMENTS = ['inaccuracy', 'mistake', 'blunder'];
const TERMINAL = new Set(['done', 'cancelled', 'failed']);

export function isTerminal(status) { return TERMINAL.has(status); }

// evalScore turns a Black's-side evaluation ({cp} | {mate}, mate > 0 when
// Black mates) into the page's score shape ({cp} | {mate, winner}); turn
// is the side to move, for "mate 0" (the side to move is mated).
export function evalScore(ev, turn) {
  if (!ev || typeof ev !== 'object') return null;
  if (typeof ev.mate === 'number') {
    if (ev.mate === 0) return { mate: 0, winner: turn === 'b' ? 'w' : 'b' };
    return { mate: ev.mate, winner: ev.mate > 0 ? 'b' : 'w' };
  }
  if (typeof ev.cp === 'number') return { cp: ev.cp };
  return null;
}

// normalizeJob reads a job answer; turn0 is the side to move at ply 0.
// Positions come back sorted by ply, unknown judgements as null.
export function normalizeJob(j, turn0 = 'b') {
  const positions = [];
  for (const p of Array.isArray(j?.positions) ? j.positions : []) {
    if (!p || !Number.isInteger(p.ply) || p.ply < 0) continue;
    const turn = (p.ply % 2 === 0) === (turn0 === 'b') ? 'b' : 'w';
    positions.push({
      ply: p.ply,
      turn,
      score: evalScore(p.eval, turn),
      bestmove: typeof p.bestmove === 'string' ? p.bestmove : null,
      pv: Array.isArray(p.pv) ? p.pv : [],
      depth: Number.isFinite(p.depth) ? p.depth : null,
      move: typeof p.move === 'string' ? p.move : null,
      loss: Number.isFinite(p.loss) ? p.loss : null,
      judgement: JUDGEMENTS.includes(p.judgement) ? p.judgement : null,
    });
  }
  positions.sort((a, b) => a.ply - b.ply);
  const prog = j?.progress || {};
  return {
    id: j?.id ?? null,
    status: typeof j?.status === 'string' ? j.status : 'running',
    done: Number.isFinite(prog.done) ? prog.done : positions.length,
    total: Number.isFinite(prog.total) ? prog.total : null,
    left: Number.isFinite(prog.estimated_left_ms) && prog.estimated_left_ms >= 0 ? prog.estimated_left_ms : null,
    positions,
    summary: j?.summary || null,
    error: j?.error || null,
  };
}

// summarize counts each side's judged moves and its average loss from the
// positions (the side of a move is the side to move where it was played).
// A loss is the drop of 2·winrate−1 (0..2); averageLoss is in points of
// win rate (0..100), as lishogi shows it.
export function summarize(positions) {
  const out = {};
  for (const side of ['b', 'w']) out[side] = { moves: 0, inaccuracy: 0, mistake: 0, blunder: 0, loss: 0, lossCount: 0 };
  for (const p of positions) {
    if (!p.move) continue;
    const s = out[p.turn];
    s.moves++;
    if (p.judgement) s[p.judgement]++;
    if (p.loss !== null) { s.loss += p.loss; s.lossCount++; }
  }
  for (const side of ['b', 'w']) {
    const s = out[side];
    s.averageLoss = s.lossCount ? Math.round((50 * s.loss) / s.lossCount) : null;
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// GameJob runs one job: start() posts it ('started', detail: its id) and
// polls until it ends, sending an 'update' event (detail: the normalized
// job) after every answer and 'error' (detail: the error) when it cannot go
// on; resume(id) follows a job already started. request(method, url,
// body) is api.request, or a stand-in in tests.
//
// The job is asked with follow: true, so it belongs to the page: usid
// keeps it while the page polls it and cancels it (error abandoned) once
// nobody has for the job's follow_ms (games.follow_grace, 10 s). Closing
// the tab ends the job and the engine time it spends; a reload, quicker
// than that, finds it again (resume).
export class GameJob extends EventTarget {
  constructor(request, { interval = 500 } = {}) {
    super();
    this.request = request;
    this.interval = interval;
    this.id = null;
    this.job = null;
    this.stopped = false;
  }

  async start({ position, engine, limits, turn0 = 'b' }) {
    this.turn0 = turn0;
    const body = { position, limits, follow: true };
    if (engine) body.engine = engine;
    let j;
    try {
      j = await this.request('POST', '/v1/games/analysis', body);
    } catch (e) {
      this.fail(e);
      return;
    }
    this.id = j.id;
    if (this.stopped) { this.cancel(); return; } // cancelled while the job was being created
    this.dispatchEvent(new CustomEvent('started', { detail: this.id }));
    this.update(j);
    await this.poll();
  }

  // resume follows a job started earlier (before the page was reloaded):
  // any instance of usid answers for it.
  async resume(id, turn0 = 'b') {
    this.turn0 = turn0;
    this.id = id;
    this.job = normalizeJob({ id, status: 'queued' }, turn0);
    let j;
    try {
      j = await this.request('GET', `/v1/games/analysis/${encodeURIComponent(id)}`);
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.stopped) return;
    this.update(j);
    await this.poll();
  }

  async poll() {
    let j;
    let misses = 0;
    while (!this.stopped && !isTerminal(this.job.status)) {
      await sleep(this.interval);
      if (this.stopped) break;
      try {
        j = await this.request('GET', `/v1/games/analysis/${encodeURIComponent(this.id)}`);
        misses = 0;
      } catch (e) {
        // A 404 (the job is gone) or a server that keeps failing ends it;
        // a single network hiccup does not.
        if (e.status === 404 || e.status === 400 || ++misses >= 5) { this.fail(e); return; }
        continue;
      }
      if (this.stopped) break; // cancelled while asking: the cancel's answer is the last word
      this.update(j);
    }
  }

  update(j) {
    // Polls well inside the job's grace, whatever the server's is.
    if (Number.isFinite(j?.follow_ms) && j.follow_ms > 0) this.interval = Math.min(this.interval, j.follow_ms / 4);
    this.job = normalizeJob(j, this.turn0);
    this.dispatchEvent(new CustomEvent('update', { detail: this.job }));
  }

  fail(e) {
    this.stopped = true;
    this.dispatchEvent(new CustomEvent('error', { detail: e }));
  }

  // cancel stops polling and asks usid to cancel the job.
  async cancel() {
    this.stopped = true;
    if (!this.id) return;
    try {
      const j = await this.request('DELETE', `/v1/games/analysis/${encodeURIComponent(this.id)}`);
      if (j && typeof j === 'object' && j.status) this.update(j);
    } catch { /* already gone: nothing to cancel */ }
  }
}
