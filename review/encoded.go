package review

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/usid/usid/internal/etag"
	"github.com/usid/usid/session"
)

// Encoded is a job's View as GET /v1/games/analysis/{id} sends it: the
// JSON, and a strong ETag of it (a hash of the bytes, so that every
// instance tags the same answer alike).
type Encoded struct {
	JSON []byte
	ETag string
}

// viewKey is what a job's View is made of that can change: two equal keys
// of one job give the same View. Results are only ever added (store,
// loadLocked: a position's result is set once, and done counts them) and
// the estimate of the time left reads the counters, not the clock.
type viewKey struct {
	status                                    string
	done, searches, inflight, searchedN, more int
	failPly                                   int
	started, finished                         time.Time
	why, pauseWhy                             *session.Error
	summary                                   *Summary
}

func (j *job) viewKeyLocked() viewKey {
	return viewKey{status: j.status, done: j.done, searches: j.searches, inflight: j.inflight, searchedN: j.searchedN,
		more: j.extras, failPly: j.failPly, started: j.started, finished: j.finished, why: j.why, pauseWhy: j.pauseWhy, summary: j.summary}
}

// encoded returns the job's View encoded. An unchanged job is encoded
// once (issue 35: a 280 KB job took 9–11 ms of CPU per GET, re-rendered
// and re-encoded each time): the encoding is kept with the job while the
// Manager's cached encodings stay within Config.MaxBytes.
func (j *job) encoded() *Encoded {
	j.mu.Lock()
	k := j.viewKeyLocked()
	if j.enc != nil && j.encKey == k {
		e := j.enc
		j.mu.Unlock()
		return e
	}
	v := j.viewLocked()
	j.mu.Unlock()
	e := encode(v)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.gone {
		return e // forgotten meanwhile: nothing more to count
	}
	if old := int64(len(j.enc.bytes())); j.m.encBytes.Add(int64(len(e.JSON))-old) <= j.m.cfg.MaxBytes {
		j.enc, j.encKey = e, k
	} else {
		j.m.encBytes.Add(old - int64(len(e.JSON)))
	}
	return e
}

// dropEncoding forgets the job's cached encoding when the Manager no
// longer holds the job: for good (forever), or until it holds it again
// (a paused shared job waiting here).
func (j *job) dropEncoding(forever bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.m.encBytes.Add(-int64(len(j.enc.bytes())))
	j.enc, j.gone = nil, forever
}

func (e *Encoded) bytes() []byte {
	if e == nil {
		return nil
	}
	return e.JSON
}

// encode writes v as the server writes JSON (no HTML escaping, a final
// newline) and tags it.
func encode(v *View) *Encoded {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return &Encoded{JSON: b.Bytes(), ETag: etag.Of(b.Bytes())}
}

// GetEncoded is Get, encoded: what GET /v1/games/analysis/{id} answers.
// A job this instance holds is encoded once per change; one read from the
// shared store is encoded afresh.
func (m *Manager) GetEncoded(client, id string) (*Encoded, *session.Error) {
	if m.st != nil {
		m.mu.Lock()
		local := m.jobs[id]
		m.mu.Unlock()
		if local == nil || local.client != client {
			v, err := m.viewShared(client, id)
			if err != nil {
				return nil, err
			}
			return encode(v), nil
		}
		if local.follow > 0 {
			if err := m.st.touch(id, client); err != nil {
				return nil, unavailable(err)
			}
		}
		return local.encoded(), nil
	}
	j := m.find(client, id)
	if j == nil {
		return nil, notFound(id)
	}
	j.followed()
	return j.encoded(), nil
}
