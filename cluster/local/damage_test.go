package local

import (
	"context"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/konverge/konverge/cluster"
)

// goodState makes a state with a few ConfigMaps and returns its file.
func goodState(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 200 {
		if _, err := s.Create(ctx, benchObject(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, dbFile)
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// openDamaged opens a damaged state and checks the error: one line,
// naming the file, saying what to do; the file untouched.
func openDamaged(t *testing.T, path, want string) {
	t.Helper()
	before := sum(t, path)
	s, err := Open(filepath.Dir(path), Options{LockTimeout: -1})
	if err == nil {
		s.Close()
		t.Fatalf("%s: opened", want)
	}
	msg := err.Error()
	if !errors.Is(err, ErrUnusable) || !strings.Contains(msg, path) || !strings.Contains(msg, want) ||
		!strings.Contains(msg, "konverge cluster reset") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming %s, saying %q and what to do", msg, path, want)
	}
	if sum(t, path) != before {
		t.Errorf("%s: the file changed", want)
	}
}

func rewrite(t *testing.T, path string, fn func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDamagedStateFiles(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		p := goodState(t)
		rewrite(t, p, func([]byte) []byte { return nil })
		openDamaged(t, p, "is empty (0 bytes)")
	})
	t.Run("truncated", func(t *testing.T) {
		for _, cut := range []int{10, 100, 4096, 8192, 3 * 4096, 5 * 4096} {
			p := goodState(t)
			rewrite(t, p, func(b []byte) []byte { return b[:cut] })
			want := "is truncated"
			if cut < 100 {
				want = "is too short"
			}
			openDamaged(t, p, want)
		}
	})
	t.Run("truncated-used-pages", func(t *testing.T) {
		// Cut inside what the last transaction uses (the file may be
		// longer: cutting what it does not use loses nothing).
		p := goodState(t)
		b, _ := os.ReadFile(p)
		m0, m1 := readMeta(b), readMeta(b[4096:])
		m := m0
		if m1.txid > m0.txid {
			m = m1
		}
		need := int(m.pgid) * int(m.pageSize)
		for _, cut := range []int{need / 2, need - 4096, need - 1} {
			q := goodState(t)
			rewrite(t, q, func(b []byte) []byte { return b[:cut] })
			openDamaged(t, q, "is truncated")
		}
		rewrite(t, p, func(b []byte) []byte { return b[:need] })
		s, err := Open(filepath.Dir(p), Options{})
		if err != nil {
			t.Fatalf("cut after the used pages: %v", err)
		}
		s.Close()
	})
	t.Run("garbage", func(t *testing.T) {
		p := goodState(t)
		rng := rand.New(rand.NewPCG(1, 2))
		rewrite(t, p, func(b []byte) []byte {
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return b
		})
		openDamaged(t, p, "is not a konverge state")
	})
	t.Run("text", func(t *testing.T) {
		p := goodState(t)
		rewrite(t, p, func([]byte) []byte { return []byte("apiVersion: v1\nkind: ConfigMap\n" + strings.Repeat("x", 5000)) })
		openDamaged(t, p, `is not a konverge state (not a bbolt database: a text file starting "apiVersion: v1\nkind: Con")`)
	})
	t.Run("sqlite", func(t *testing.T) {
		p := goodState(t)
		rewrite(t, p, func([]byte) []byte { return append([]byte("SQLite format 3\x00"), make([]byte, 8192)...) })
		openDamaged(t, p, "an SQLite database")
	})
	t.Run("both-metas", func(t *testing.T) {
		p := goodState(t)
		rewrite(t, p, func(b []byte) []byte {
			b[pageHeaderSize+20]++      // meta 0's root page
			b[4096+pageHeaderSize+20]++ // meta 1's
			return b
		})
		openDamaged(t, p, "is damaged (both of its meta pages fail their checksum)")
	})
	t.Run("foreign-bbolt", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, dbFile)
		db, err := bolt.Open(p, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket([]byte("users"))
			if err != nil {
				return err
			}
			return b.Put([]byte("alice"), []byte("admin"))
		}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		openDamaged(t, p, "is a bbolt database but not a konverge state")
	})
	t.Run("newer-format", func(t *testing.T) {
		p := goodState(t)
		db, err := bolt.Open(p, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error {
			m := tx.Bucket(bucketMeta)
			if err := m.Put(keyFormat, []byte("99")); err != nil {
				return err
			}
			return m.Put(keyWrittenBy, []byte("konverge v9.9.9"))
		}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		before := sum(t, p)
		_, err = Open(filepath.Dir(p), Options{})
		if err == nil || !strings.Contains(err.Error(), "was written by konverge v9.9.9 (state format 99)") || !errors.Is(err, ErrUnusable) {
			t.Errorf("error %v", err)
		}
		if sum(t, p) != before {
			t.Error("the file changed")
		}
	})
}

// A state of the format before formats were recorded opens, migrated in
// place, its objects intact.
func TestEarlierFormatMigrated(t *testing.T) {
	p := goodState(t)
	db, err := bolt.Open(p, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if err := m.Delete(keyFormat); err != nil {
			return err
		}
		return m.Delete(keyWrittenBy)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(filepath.Dir(p), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.List(context.Background(), configMapGVKForTest, cluster.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range l.Items {
		if strings.HasPrefix(metaString(o, "name"), "cm-") {
			n++
		}
	}
	if n != 200 {
		t.Errorf("%d ConfigMaps after the migration, want 200", n)
	}
	if v, _ := s.GetMeta(context.Background(), string(keyFormat)); string(v) != "2" {
		t.Errorf("format after migration %q", v)
	}
}

// Pages damaged in the middle of the file: every read fails or succeeds,
// none panics or faults.
func TestDamagedPagesDoNotPanic(t *testing.T) {
	reported := 0
	defer func() {
		if reported == 0 {
			t.Error("no damage was reported")
		}
	}()
	for seed := range uint64(8) {
		p := goodState(t)
		rng := rand.New(rand.NewPCG(seed, 7))
		rewrite(t, p, func(b []byte) []byte {
			used := int(max(readMeta(b).pgid, readMeta(b[4096:]).pgid))
			for range 2 {
				page := 2 + rng.IntN(used-2)
				for i := page * 4096; i < (page+1)*4096; i++ {
					b[i] = byte(rng.IntN(256))
				}
			}
			return b
		})
		s, err := Open(filepath.Dir(p), Options{LockTimeout: -1})
		if err != nil {
			if !errors.Is(err, ErrUnusable) {
				t.Errorf("seed %d: open: %v: want a StateError", seed, err)
			}
			reported++
			continue
		}
		ctx := context.Background()
		_, lerr := s.List(ctx, configMapGVKForTest)
		_, cerr := s.Create(ctx, benchObject(1000))
		for _, err := range []error{lerr, cerr} {
			if err != nil && !errors.Is(err, ErrUnusable) {
				t.Errorf("seed %d: %v: want a StateError", seed, err)
			}
		}
		if lerr != nil {
			reported++
		}
		s.Close()
	}
}

var configMapGVKForTest = gvkOf(benchObject(0))
