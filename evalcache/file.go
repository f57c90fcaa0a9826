package evalcache

import (
	"encoding/binary"
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"
)

// fileStore mirrors the memory tier in a bbolt file: one bucket, the key to
// depth, nodes and time (8 bytes each) and the value. bbolt (etcd's
// embedded store) is pure Go, keeps one file with ACID transactions and
// takes an exclusive lock on it, so two processes cannot share one file by
// mistake.
type fileStore struct {
	db *bolt.DB
}

var bucket = []byte("eval")

func openFile(path string) (*fileStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, err
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}); err != nil {
		db.Close()
		return nil, err
	}
	return &fileStore{db: db}, nil
}

func encode(e Entry) []byte {
	b := make([]byte, 24+len(e.Value))
	binary.BigEndian.PutUint64(b[0:], uint64(e.Depth))
	binary.BigEndian.PutUint64(b[8:], uint64(e.Nodes))
	binary.BigEndian.PutUint64(b[16:], uint64(e.TimeMS))
	copy(b[24:], e.Value)
	return b
}

func decode(b []byte) (Entry, error) {
	if len(b) < 24 {
		return Entry{}, errors.New("evalcache: a short record in the file")
	}
	return Entry{
		Depth:  int(binary.BigEndian.Uint64(b[0:])),
		Nodes:  int64(binary.BigEndian.Uint64(b[8:])),
		TimeMS: int64(binary.BigEndian.Uint64(b[16:])),
		Value:  append([]byte(nil), b[24:]...),
	}, nil
}

// each calls f with the file's entries until f returns false; broken
// records are skipped.
func (f *fileStore) each(fn func(string, Entry) bool) error {
	return f.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			e, err := decode(v)
			if err != nil {
				continue
			}
			if !fn(string(k), e) {
				break
			}
		}
		return nil
	})
}

// put stores e; the memory tier already decided it is the deeper one.
// Batch groups concurrent writes into one transaction (one fsync).
func (f *fileStore) put(key string, e Entry) error {
	return f.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Put([]byte(key), encode(e)) })
}

func (f *fileStore) delete(key string) error {
	return f.db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucket).Delete([]byte(key)) })
}

func (f *fileStore) close() error { return f.db.Close() }
