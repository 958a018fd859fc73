package local

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// The state file's format and its checks. A state file is a bbolt
// database whose meta bucket says which format of konverge's it holds
// (keyFormat; a state without it is format 1, the layout of the releases
// before formats were recorded). Before bbolt maps a file, Open reads its
// two meta pages itself: an empty, truncated, foreign or damaged file is
// refused with a *StateError, and nothing is written to it. A state of an
// earlier format is migrated in place, in one transaction; one of a later
// format is refused, naming the release that wrote it.

// FormatVersion is the format of the states this konverge writes.
//
//	1  the layout without a recorded format (earlier releases)
//	2  keyFormat and keyWrittenBy recorded; the clock committed with every
//	   write
const FormatVersion = 2

// Meta keys of the format.
var (
	keyFormat    = []byte("format")
	keyWrittenBy = []byte("written-by")
)

// Release names this konverge in the states it writes ("konverge
// v1.2.3", or "konverge (devel)" for a build from source).
var Release = func() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return "konverge " + v
}()

// ErrUnusable is the cause of a *StateError, for errors.Is.
var ErrUnusable = errors.New("state file unusable")

// StateError reports a state file that cannot be opened as it is: what is
// wrong with it and what to do. Open leaves such a file untouched.
type StateError struct {
	// File is the state file.
	File string
	// Problem says what is wrong ("is empty (0 bytes)").
	Problem string
	// Remedy says what to do.
	Remedy string
}

// remedyReset is what to do about a state that holds nothing usable.
const remedyReset = `restore it from a backup, or run "konverge cluster reset" to move it aside and start an empty cluster`

func (e *StateError) Error() string {
	return fmt.Sprintf("local: state file %s %s: %s", e.File, e.Problem, e.Remedy)
}

// Is makes errors.Is(err, ErrUnusable) hold.
func (e *StateError) Is(target error) bool { return target == ErrUnusable }

// bbolt's on-disk constants (internal/common): a page header of 16 bytes,
// then the meta: magic, version, page size, flags, root bucket (page,
// sequence), freelist page, high-water page, txid, checksum.
const (
	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	pageHeaderSize  = 16
	metaSize        = 64
	metaSummed      = 56 // the checksum covers the fields before it
	noFreelist      = ^uint64(0)
	minBoltFileSize = 4 // pages: two metas, a freelist, a leaf
)

type boltMeta struct {
	pageSize                     uint32
	root, freelist, pgid, txid   uint64
	magicOK, versionOK, checksum bool
}

func readMeta(b []byte) boltMeta {
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.LittleEndian
	h := fnv.New64a()
	h.Write(m[:metaSummed])
	return boltMeta{
		magicOK:   le.Uint32(m[0:]) == boltMagic,
		versionOK: le.Uint32(m[4:]) == boltVersion,
		pageSize:  le.Uint32(m[8:]),
		root:      le.Uint64(m[16:]),
		freelist:  le.Uint64(m[32:]),
		pgid:      le.Uint64(m[40:]),
		txid:      le.Uint64(m[48:]),
		checksum:  le.Uint64(m[56:]) == h.Sum64(),
	}
}

func (m boltMeta) valid() bool { return m.magicOK && m.versionOK && m.checksum }

// checkFile reads the meta pages of an existing state file and refuses
// one that bbolt could not map safely: empty, not a bbolt database, both
// metas damaged, or shorter than its last transaction needs (bbolt would
// fault reading beyond the end).
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("local: open state file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("local: open state file %s: %w", path, err)
	}
	size := st.Size()
	if !st.Mode().IsRegular() {
		return &StateError{File: path, Problem: "is not a regular file", Remedy: "point --state at a directory whose state.db is a konverge state, or remove it"}
	}
	if size == 0 {
		return &StateError{File: path, Problem: "is empty (0 bytes): it was truncated or never written, so it holds no cluster", Remedy: remedyReset}
	}
	head := make([]byte, pageHeaderSize+metaSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("local: read state file %s: %w", path, err)
	}
	if n < len(head) {
		return &StateError{File: path, Problem: fmt.Sprintf("is too short to be a konverge state (%d bytes)", size), Remedy: remedyReset}
	}
	m0 := readMeta(head)
	var candidates []boltMeta
	if m0.valid() {
		candidates = append(candidates, m0)
	}
	// The second meta is one page further: at the first meta's page size,
	// or, when that one is damaged, at a common page size.
	sizes := []int64{4096, 8192, 16384, 32768, 65536}
	if m0.valid() {
		sizes = []int64{int64(m0.pageSize)}
	}
	anyMagic := m0.magicOK
	for _, ps := range sizes {
		b := make([]byte, pageHeaderSize+metaSize)
		if n, _ := f.ReadAt(b, ps); n < len(b) {
			continue
		}
		m1 := readMeta(b)
		anyMagic = anyMagic || m1.magicOK
		if m1.valid() && int64(m1.pageSize) == ps {
			candidates = append(candidates, m1)
			break
		}
	}
	if len(candidates) == 0 {
		if !anyMagic {
			return &StateError{File: path, Problem: "is not a konverge state (not a bbolt database" + describeStart(head) + ")",
				Remedy: "point --state at a konverge state, or run \"konverge cluster reset\" to move the file aside and start an empty cluster"}
		}
		if !m0.versionOK && m0.magicOK {
			return &StateError{File: path, Problem: "is a bbolt database of an unknown version", Remedy: remedyReset}
		}
		return &StateError{File: path, Problem: "is damaged (both of its meta pages fail their checksum)", Remedy: remedyReset}
	}
	m := candidates[0]
	for _, c := range candidates[1:] {
		if c.txid > m.txid {
			m = c
		}
	}
	ps := int64(m.pageSize)
	if ps < 512 || ps&(ps-1) != 0 || m.pgid < minBoltFileSize || m.root >= m.pgid || (m.freelist != noFreelist && m.freelist >= m.pgid) {
		return &StateError{File: path, Problem: "is damaged (its meta page points outside the file)", Remedy: remedyReset}
	}
	if need := int64(m.pgid) * ps; m.pgid > uint64(1<<62)/uint64(ps) || size < need {
		return &StateError{File: path, Problem: fmt.Sprintf("is truncated: it has %d bytes, its last transaction needs %d", size, int64(m.pgid)*ps), Remedy: remedyReset}
	}
	return nil
}

// describeStart names what a foreign file starts with, for the error.
func describeStart(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("SQLite format 3")):
		return ": an SQLite database"
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return ": a zip archive"
	case bytes.HasPrefix(b, []byte("\x1f\x8b")):
		return ": a gzip file"
	}
	text := true
	for _, c := range b[:min(len(b), 32)] {
		if c < 0x09 || (c > 0x0d && c < 0x20) || c == 0x7f {
			text = false
			break
		}
	}
	if text {
		s := strings.TrimSpace(string(b[:min(len(b), 24)]))
		return fmt.Sprintf(": a text file starting %q", s)
	}
	return ""
}

// checkFormat reads the state's format in tx: ok with the format of a
// state this konverge reads (a state with none of konverge's buckets is
// new when it is empty, foreign otherwise).
func checkFormat(path string, tx *bolt.Tx) (format int, isNew bool, err error) {
	have := 0
	for _, b := range buckets {
		if tx.Bucket(b) != nil {
			have++
		}
	}
	if have == 0 {
		others := 0
		_ = tx.ForEach(func([]byte, *bolt.Bucket) error { others++; return nil })
		if others > 0 {
			return 0, false, &StateError{File: path, Problem: "is a bbolt database but not a konverge state (it has none of konverge's buckets)",
				Remedy: "point --state at a konverge state, or run \"konverge cluster reset\" to move the file aside and start an empty cluster"}
		}
		return FormatVersion, true, nil
	}
	meta := tx.Bucket(bucketMeta)
	if meta == nil || tx.Bucket(bucketObjects) == nil {
		return 0, false, &StateError{File: path, Problem: "is damaged (some of konverge's buckets are missing)", Remedy: remedyReset}
	}
	v := meta.Get(keyFormat)
	if v == nil {
		return 1, false, nil
	}
	format, err = strconv.Atoi(string(v))
	if err != nil || format < 1 {
		return 0, false, &StateError{File: path, Problem: fmt.Sprintf("is damaged (its format %q is not a number)", v), Remedy: remedyReset}
	}
	if format > FormatVersion {
		by := string(meta.Get(keyWrittenBy))
		if by == "" {
			by = "a newer konverge"
		}
		return format, false, &StateError{File: path,
			Problem: fmt.Sprintf("was written by %s (state format %d); this konverge (%s) reads formats 1 to %d", by, format, Release, FormatVersion),
			Remedy:  "use that release or a later one, or run \"konverge cluster reset\" to move the file aside and start an empty cluster"}
	}
	return format, false, nil
}

// migrate brings a state of an earlier format to FormatVersion, in tx.
func migrate(tx *bolt.Tx, from int) error {
	meta := tx.Bucket(bucketMeta)
	switch from {
	case 1:
		// Format 2 records the format and stores nothing else
		// differently: the clock is written with every transaction
		// from now on.
	}
	if err := meta.Put(keyFormat, []byte(strconv.Itoa(FormatVersion))); err != nil {
		return err
	}
	return meta.Put(keyWrittenBy, []byte(Release))
}

// ResetState moves the state file of dir aside (to state.db.<stamp>.bak,
// returned) so that the next Open starts an empty cluster. It fails when
// another process holds the state. A state directory without a state file
// is left as it is ("" returned).
func ResetState(dir, stamp string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("local: reset state %s: %w", dir, err)
	}
	path := filepath.Join(abs, dbFile)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("local: reset state %s: %w", abs, err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return "", &LockedError{Dir: abs, PID: readPID(abs)}
	}
	backup := path + "." + stamp + ".bak"
	if _, err := os.Stat(backup); err == nil {
		return "", fmt.Errorf("local: reset state %s: %s exists already", abs, backup)
	}
	if err := os.Rename(path, backup); err != nil {
		return "", fmt.Errorf("local: reset state %s: %w", abs, err)
	}
	syncDir(abs)
	return backup, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
