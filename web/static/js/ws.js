// A WebSocket to usid's /v1/ws that comes back by itself. When the
// connection drops (server restart, load balancer, phone sleeping) it retries
// with exponential backoff and jitter, so a fleet of open pages does not
// reconnect in lockstep. Pages listen for 'message' (detail: the parsed
// event), 'open' (also after a reconnect: resend what should be running) and
// 'state' (detail: {state, retryIn}).

const MIN_DELAY = 500;
const MAX_DELAY = 15000;

export class UsidSocket extends EventTarget {
  constructor(path = '/v1/ws') {
    super();
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    this.url = `${scheme}//${location.host}${path}`;
    this.ws = null;
    this.delay = MIN_DELAY;
    this.timer = 0;
    this.state = 'idle';
    // Retry at once when the tab comes back online instead of waiting.
    addEventListener('online', () => { if (this.state === 'waiting') this.connectNow(); });
  }

  get open() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  connect() {
    if (this.ws || this.state === 'waiting' || this.state === 'closed') return;
    this.connectNow();
  }

  connectNow() {
    clearTimeout(this.timer);
    this.setState('connecting');
    const ws = new WebSocket(this.url);
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.delay = MIN_DELAY;
      if (this.refused) { this.refused = null; this.dispatchEvent(new CustomEvent('refused', { detail: null })); }
      this.setState('open');
      this.dispatchEvent(new Event('open'));
    };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg && typeof msg.type === 'string') this.dispatchEvent(new CustomEvent('message', { detail: msg }));
    };
    ws.onclose = () => {
      if (this.ws !== ws || this.state === 'closed') return;
      this.ws = null;
      const wait = Math.round(this.delay * (0.5 + Math.random()));
      this.delay = Math.min(this.delay * 2, MAX_DELAY);
      this.setState('waiting', wait);
      this.dispatchEvent(new Event('close'));
      if (!opened) this.whyRefused();
      this.timer = setTimeout(() => this.connectNow(), wait);
    };
  }

  // close ends the connection for good (no retry): the page no longer
  // needs it (the second engine removed, or refused by the client's quota).
  close() {
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null;
    this.setState('closed');
    if (ws) ws.close();
  }

  // send returns false when the socket is not open; the caller keeps its
  // request and sends it again on 'open'.
  send(msg) {
    if (!this.open) {
      this.connect();
      return false;
    }
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  // whyRefused looks into a connection that never opened: the browser
  // hides the handshake's answer, but when usid answers HTTP it is up, and
  // what refuses the page is its quota of live connections (the fifth tab
  // of an anonymous client gets 429). 'refused' (detail: {sessions}, the
  // quota from GET /v1/limits) lets the page say so; null once it opens.
  async whyRefused() {
    let limits = null;
    try {
      const res = await fetch('/v1/limits', { headers: { Accept: 'application/json' } });
      if (res.ok) limits = await res.json();
    } catch { return; } // usid is down: the retry countdown says enough
    if (!limits || this.open) return;
    this.refused = { sessions: limits.quota?.sessions || 0 };
    this.dispatchEvent(new CustomEvent('refused', { detail: this.refused }));
  }

  setState(state, retryIn = 0) {
    this.state = state;
    this.dispatchEvent(new CustomEvent('state', { detail: { state, retryIn } }));
  }
}
