package evalcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// fileStore mirrors the memory tier in a bbolt file: one bucket, the key to
// depth, nodes, time and the search's end (8 bytes each) and the value.
// bbolt (etcd's embedded store) is pure Go, keeps one file with ACID
// transactions and takes an exclusive lock on it, so two processes cannot
// share one file by mistake.
type fileStore struct {
	db *bolt.DB
}

// bucket holds the entries; oldBuckets are earlier formats, dropped at
// open. A file with anything else in it is not ours.
var (
	bucket     = []byte("usid-eval-v2")
	oldBuckets = [][]byte{[]byte("eval")}
)

// openFile opens path, or, when the file is damaged or foreign, moves it
// aside to path.broken (replacing an older one) and starts a new file.
// Only what a new file cannot fix is an error: the lock held by another
// process, a directory that cannot be written.
func openFile(path string, log *slog.Logger) (*fileStore, error) {
	f, err := tryOpen(path)
	if err == nil {
		return f, nil
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%s is locked by another process: %w", path, err)
	}
	aside := path + ".broken"
	if rerr := os.Rename(path, aside); rerr != nil {
		return nil, fmt.Errorf("%s is unusable (%v) and cannot be moved aside: %w", path, err, rerr)
	}
	log.Warn("evaluation cache file is damaged or not ours: moved aside, starting a new one", "file", path, "moved_to", aside, "err", err)
	f, err2 := tryOpen(path)
	if err2 != nil {
		return nil, fmt.Errorf("a new %s: %w", path, err2)
	}
	return f, nil
}

// tryOpen opens and checks path in a goroutine of its own, where a fault on
// the file's memory map (a page past a truncated end) is a panic that is
// recovered, not a crash.
func tryOpen(path string) (f *fileStore, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		debug.SetPanicOnFault(true)
		var db *bolt.DB
		defer func() {
			if r := recover(); r != nil {
				if db != nil {
					db.Close()
				}
				f, err = nil, fmt.Errorf("reading the file panicked: %v", r)
			}
		}()
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
		if err != nil {
			db = nil
			return
		}
		if err = check(db, path); err != nil {
			db.Close()
			return
		}
		f = &fileStore{db: db}
	}()
	<-done
	return f, err
}

// check makes sure every page the store will read lies within the file and
// the file holds only this store's buckets, walks every entry (this
// goroutine turns faults into panics), runs bbolt's consistency check (free
// list, page references), and only then drops older formats and makes the
// bucket.
func check(db *bolt.DB, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Size() > st.Size() {
			return fmt.Errorf("the file is %d bytes, its pages reach %d: truncated", st.Size(), tx.Size())
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if !bytes.Equal(name, bucket) && !isOld(name) {
				return fmt.Errorf("a foreign bucket %q", name)
			}
			return b.ForEach(func(k, v []byte) error {
				if v == nil {
					return fmt.Errorf("a nested bucket %q", k)
				}
				return nil
			})
		})
	})
	if err != nil {
		return err
	}
	err = db.View(func(tx *bolt.Tx) error {
		var errs []error
		for e := range tx.Check() {
			if len(errs) < 3 {
				errs = append(errs, e)
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		for _, old := range oldBuckets {
			if tx.Bucket(old) != nil {
				if err := tx.DeleteBucket(old); err != nil {
					return err
				}
			}
		}
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	})
}

func isOld(name []byte) bool {
	for _, o := range oldBuckets {
		if bytes.Equal(name, o) {
			return true
		}
	}
	return false
}

const headerSize = 32

func encode(e Entry) []byte {
	b := make([]byte, headerSize+len(e.Value))
	binary.BigEndian.PutUint64(b[0:], uint64(e.Depth))
	binary.BigEndian.PutUint64(b[8:], uint64(e.Nodes))
	binary.BigEndian.PutUint64(b[16:], uint64(e.TimeMS))
	binary.BigEndian.PutUint64(b[24:], uint64(e.At.UnixMilli()))
	copy(b[headerSize:], e.Value)
	return b
}

// decode reads a record, copying its value only if at most maxValue bytes.
func decode(b []byte, maxValue int) (Entry, error) {
	if len(b) < headerSize {
		return Entry{}, errors.New("evalcache: a short record in the file")
	}
	if len(b)-headerSize > maxValue {
		return Entry{}, errors.New("evalcache: a record over the size bound")
	}
	return Entry{
		Depth:  int(int64(binary.BigEndian.Uint64(b[0:]))),
		Nodes:  int64(binary.BigEndian.Uint64(b[8:])),
		TimeMS: int64(binary.BigEndian.Uint64(b[16:])),
		At:     time.UnixMilli(int64(binary.BigEndian.Uint64(b[24:]))),
		Value:  append([]byte(nil), b[headerSize:]...),
	}, nil
}

// each calls fn with the file's entries until fn returns false; a record
// that cannot be decoded is passed as a zero Entry (unsound: the caller
// drops it).
func (f *fileStore) each(maxValue int, fn func(string, Entry) bool) {
	f.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			e, _ := decode(v, maxValue)
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

// deleteAll removes keys in one transaction.
func (f *fileStore) deleteAll(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return f.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for _, k := range keys {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (f *fileStore) close() error { return f.db.Close() }
