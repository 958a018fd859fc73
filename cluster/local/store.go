package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/kinds"
	"github.com/konverge/konverge/schema"
)

// Clock tells the time the store writes into objects: creationTimestamp,
// deletionTimestamp and the like. The controllers of the embedded cluster
// run on a virtual clock; tests pin it.
type Clock interface {
	Now() time.Time
}

// PersistentClock is a Clock that the store saves with every write that
// changes an object: under the meta key it names, in the transaction of
// the write, so that the cluster time and the objects stamped with it are
// committed together (a kill at any instant leaves them consistent).
// package clock's Clock is one.
type PersistentClock interface {
	Clock
	// Persisted returns the meta key and the value to store; key "" means
	// nothing to store.
	Persisted() (key string, value []byte, err error)
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Options tune Open. The zero value is valid.
type Options struct {
	// Clock stamps every time the store writes (creationTimestamp,
	// deletionTimestamp). Nil means the wall clock.
	Clock Clock
	// LockTimeout is how long Open waits for another process to release
	// the state, trying periodically. Zero means DefaultLockTimeout; a
	// negative value means one try.
	LockTimeout time.Duration
	// FieldManager names, in managedFields, the manager of writes that name
	// none (where kube-apiserver takes the name from the client's user
	// agent); "" means DefaultFieldManager.
	FieldManager string
	// Warnings receives the warnings of the calls made through the
	// Store, once each call has succeeded, as a real API server sends
	// them in Warning headers (`unknown field "spec.replica"`); nil drops
	// them.
	Warnings func(msg string)
}

// DefaultLockTimeout is how long Open waits for the state by default.
const DefaultLockTimeout = 30 * time.Second

// File names inside the state directory.
const (
	dbFile  = "state.db"
	pidFile = "lock.pid"
)

// Store is the embedded cluster: a Kubernetes API over one bbolt database.
// Its methods are safe for concurrent use.
type Store struct {
	dir   string
	db    *bolt.DB
	clock Clock
	// fieldManager is Options.FieldManager.
	fieldManager string
	// warn is Options.Warnings.
	warn func(msg string)

	builtin []cluster.Resource
	// api is the committed view of the served kinds (built-in plus the
	// CRDs in the database). A write transaction works on its own copy
	// and publishes it on commit.
	api atomic.Pointer[apiState]

	// writeMu orders write transactions and the publication of their
	// events, so that watchers see events in resourceVersion order.
	writeMu sync.Mutex
	hub     *hub

	closeOnce sync.Once
	closeErr  error

	// decoded counts the objects decoded by writes (a measure of their
	// work, for tests).
	decoded atomic.Int64
	// readAhead counts the objects writes took from batch.Prefetch (for
	// tests).
	readAhead atomic.Int64
	// patchedAhead counts the patches that took a patched object from
	// batch.Prefetch (for tests).
	patchedAhead atomic.Int64
}

var _ cluster.Interface = (*Store)(nil)

// Open opens the state in dir, creating the directory (0700) and the
// database dir/state.db (0600) on first use, and holds it until Close: one
// process at a time. When another process holds it, Open tries again
// periodically for Options.LockTimeout and then fails with a *LockedError.
//
// Open creates the namespaces every cluster has (default, kube-system,
// kube-public, kube-node-lease) when they are missing and serves the
// CustomResourceDefinitions stored in the state.
func Open(dir string, opts Options) (*Store, error) {
	if opts.Clock == nil {
		opts.Clock = wallClock{}
	}
	timeout := opts.LockTimeout
	switch {
	case timeout == 0:
		timeout = DefaultLockTimeout
	case timeout < 0:
		timeout = time.Nanosecond // bbolt then tries exactly once
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("local: open state %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("local: open state %s: %w", abs, err)
	}
	path := filepath.Join(abs, dbFile)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		if err := createState(abs, opts); err != nil {
			return nil, err
		}
	}
	// What bbolt cannot map safely is refused before it is mapped, and
	// left untouched.
	if err := checkFile(path); err != nil {
		return nil, err
	}
	s, err := openState(abs, path, opts, timeout)
	if err != nil {
		return nil, err
	}
	writePID(abs)
	return s, nil
}

// openState opens the bbolt database at path and initializes the store.
func openState(abs, path string, opts Options, timeout time.Duration) (s *Store, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damage(path, r)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      timeout,
		FreelistType: bolt.FreelistMapType,
		// Mapping more than the file from the start spares the remaps
		// (and copies of dirty nodes) of a growing database; it is
		// address space, not memory.
		InitialMmapSize: 1 << 30,
	})
	if err != nil {
		switch {
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, &LockedError{Dir: abs, PID: readPID(abs)}
		case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum), errors.Is(err, bolterrors.ErrVersionMismatch):
			return nil, &StateError{File: path, Problem: "is damaged (" + err.Error() + ")", Remedy: remedyReset}
		}
		return nil, fmt.Errorf("local: open state %s: %w", abs, err)
	}
	s = &Store{
		dir:          abs,
		db:           db,
		clock:        opts.Clock,
		fieldManager: opts.FieldManager,
		warn:         opts.Warnings,
		builtin:      kinds.Builtin(),
	}
	if err := s.init(); err != nil {
		db.Close()
		var se *StateError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("local: open state %s: %w", abs, err)
	}
	return s, nil
}

// createState creates a new state in dir: in a file of its own, linked in
// place once complete, so that a state file is never half made (a kill
// while it is created leaves no state.db, and the next Open starts over).
func createState(abs string, opts Options) error {
	tmp := filepath.Join(abs, fmt.Sprintf(".%s.%d.new", dbFile, os.Getpid()))
	_ = os.Remove(tmp)
	s, err := openState(abs, tmp, opts, time.Nanosecond)
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := s.db.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("local: create state %s: %w", abs, err)
	}
	err = os.Link(tmp, filepath.Join(abs, dbFile))
	_ = os.Remove(tmp)
	if err != nil && !errors.Is(err, os.ErrExist) {
		// (Another process made it first: theirs is used.)
		return fmt.Errorf("local: create state %s: %w", abs, err)
	}
	syncDir(abs)
	return nil
}

// damaged turns a panic of bbolt on a damaged state file into the
// function's error (deferred by the functions that read the file).
func (s *Store) damaged(err *error) {
	if r := recover(); r != nil {
		*err = damage(s.db.Path(), r)
	}
}

// damage is the error of a panic in bbolt (or a fault of its memory map)
// on a damaged state file; any other panic goes on.
func damage(path string, r any) error {
	if e, ok := r.(runtime.Error); ok && !strings.Contains(e.Error(), "fault") {
		panic(r)
	}
	return &StateError{File: path, Problem: fmt.Sprintf("is damaged (%v)", r), Remedy: remedyReset}
}

// init creates the buckets and the initial namespaces when they are
// missing, and loads the CRDs.
func (s *Store) init() error {
	var rev uint64
	ready := false
	format := FormatVersion
	path := s.db.Path()
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		if format, _, err = checkFormat(path, tx); err != nil {
			return err
		}
		if format != FormatVersion {
			return nil
		}
		for _, b := range buckets {
			if tx.Bucket(b) == nil {
				return nil
			}
		}
		api, err := loadAPI(tx, s.builtin)
		if err != nil {
			return err
		}
		t := s.newTxn(context.Background(), tx, api)
		if string(tx.Bucket(bucketMeta).Get([]byte(keyBootstrap))) != bootstrapVersion {
			return nil
		}
		for _, ns := range initialNamespaces {
			if !t.exists(objKey{gk: namespaceGK, name: ns}) {
				return nil
			}
		}
		s.api.Store(api)
		rev, ready = t.rev, true
		return nil
	})
	if err != nil || ready {
		s.hub = newHub(rev)
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		// A new state, or one of an earlier format migrated, in the same
		// transaction as the rest.
		if err := migrate(tx, format); err != nil {
			return err
		}
		api, err := loadAPI(tx, s.builtin)
		if err != nil {
			return err
		}
		// An existing state is bootstrapped at its own cluster time, not
		// at the time of the clock the command opened it with (a wall
		// clock, before the state's own clock is loaded).
		if at, ok := persistedNow(tx, s.clock); ok {
			saved := s.clock
			s.clock = fixedClock(at)
			defer func() { s.clock = saved }()
		}
		t := s.newTxn(context.Background(), tx, api)
		t.noClock = true
		if err := t.bootstrap(); err != nil {
			return err
		}
		if err := t.finish(); err != nil {
			return err
		}
		s.api.Store(t.api)
		rev = t.rev
		return nil
	})
	if err != nil {
		return err
	}
	s.hub = newHub(rev)
	return nil
}

// Close stops every watcher and releases the state.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.hub.close()
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		removePID(s.dir)
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("local: close state %s: %w", s.dir, err)
		}
	})
	return s.closeErr
}

// Dir returns the state directory.
func (s *Store) Dir() string { return s.dir }

// GetMeta returns the value stored under key in the state's meta bucket,
// nil when there is none. The bucket holds what the embedded cluster keeps
// besides objects (its controllers' virtual clock, say); the key
// "revision" is the store's own.
func (s *Store) GetMeta(ctx context.Context, key string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(t *txn) error {
		out = bytes.Clone(t.tx.Bucket(bucketMeta).Get([]byte(key)))
		return nil
	})
	return out, err
}

// PutMeta stores value under key in the meta bucket, in its own
// transaction.
func (s *Store) PutMeta(ctx context.Context, key string, value []byte) error {
	if key == "" || key == string(keyRevision) {
		return fmt.Errorf("local: meta key %q is reserved", key)
	}
	return s.update(ctx, func(t *txn) error {
		if err := t.tx.Bucket(bucketMeta).Put([]byte(key), value); err != nil {
			return fmt.Errorf("local: put meta %s: %w", key, err)
		}
		return nil
	})
}

// Mapper returns the kinds the store serves: the built-in kinds and the
// custom resources of the CRDs it holds.
func (s *Store) Mapper() cluster.Mapper { return s.api.Load().mapper }

// update runs fn in one read-write transaction, committed if fn succeeds,
// and then delivers the transaction's events to watchers.
func (s *Store) update(ctx context.Context, fn func(t *txn) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.damaged(&err)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var t *txn
	var fnErr error
	err = s.db.Update(func(tx *bolt.Tx) error {
		t = s.newTxn(ctx, tx, s.api.Load())
		if fnErr = fn(t); fnErr == nil {
			fnErr = t.failed
		}
		if fnErr != nil {
			return fnErr
		}
		return t.finish()
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("local: write to state %s: %w", s.dir, err)
	}
	s.published(t)
	return nil
}

// published makes a committed transaction's API changes and events
// visible.
func (s *Store) published(t *txn) {
	if t.apiChanged {
		s.api.Store(t.api)
	}
	s.hub.publish(t.events, t.rev)
	s.deliverWarnings(t)
}

// Txn is a Batch whose caller decides when it ends: every call through
// Cluster joins one read-write transaction, which Commit stores and
// Rollback drops. It holds the store's write lock until then (other
// writers wait; readers see the state before it). A controller runner
// uses it to keep a transaction open across its syncs, and to drop the
// writes of a sync that failed.
type Txn struct {
	s    *Store
	tx   *bolt.Tx
	t    *txn
	b    *batch
	done bool
}

// Begin opens a Txn. The caller must end it with Commit or Rollback.
func (s *Store) Begin(ctx context.Context) (*Txn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.writeMu.Lock()
	tx, err := s.db.Begin(true)
	if err != nil {
		s.writeMu.Unlock()
		return nil, fmt.Errorf("local: write to state %s: %w", s.dir, err)
	}
	t := s.newTxn(ctx, tx, s.api.Load())
	return &Txn{s: s, tx: tx, t: t, b: &batch{s: s, t: t}}, nil
}

// Cluster is the cluster.Interface of the transaction (see Batch); it is
// not valid after Commit or Rollback.
func (x *Txn) Cluster() cluster.Interface { return x.b }

// Commit stores what the transaction wrote (nothing when a call of it
// failed in a way that leaves it half-done: it then rolls back and
// returns that failure) and delivers its events to watchers.
func (x *Txn) Commit() (err error) {
	if x.done {
		return errors.New("local: transaction already ended")
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer x.s.damaged(&err)
	x.done = true
	x.b.end()
	defer x.s.writeMu.Unlock()
	if x.t.failed != nil {
		_ = x.tx.Rollback()
		return x.t.failed
	}
	if err := x.t.finish(); err != nil {
		_ = x.tx.Rollback()
		return fmt.Errorf("local: write to state %s: %w", x.s.dir, err)
	}
	if err := x.tx.Commit(); err != nil {
		return fmt.Errorf("local: write to state %s: %w", x.s.dir, err)
	}
	x.s.published(x.t)
	return nil
}

// Rollback drops what the transaction wrote. It does nothing after Commit
// or Rollback.
func (x *Txn) Rollback() {
	if x.done {
		return
	}
	x.done = true
	x.b.end()
	defer x.s.writeMu.Unlock()
	_ = x.tx.Rollback()
}

// Wrote reports whether the transaction changed any object, or wrote to
// the meta bucket (BatchPutMeta), so far.
func (x *Txn) Wrote() bool { return x.t.revDirty || x.t.metaDirty }

type quietKey struct{}

// WithoutWarnings marks the calls made with ctx as the control plane's
// own (its controllers'): their warnings reach no Options.Warnings, as
// the Warning headers of kube-controller-manager's requests reach no
// user.
func WithoutWarnings(ctx context.Context) context.Context {
	return context.WithValue(ctx, quietKey{}, true)
}

// deliverWarnings hands the warnings of a successful transaction to
// Options.Warnings.
func (s *Store) deliverWarnings(t *txn) {
	if s.warn == nil || t.ctx.Value(quietKey{}) != nil {
		return
	}
	for _, w := range t.warnings {
		s.warn(w)
	}
}

// view runs fn in one read-only transaction.
func (s *Store) view(ctx context.Context, fn func(t *txn) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.damaged(&err)
	var fnErr error
	var t *txn
	err = s.db.View(func(tx *bolt.Tx) error {
		t = s.newTxn(ctx, tx, s.api.Load())
		fnErr = fn(t)
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("local: read state %s: %w", s.dir, err)
	}
	s.deliverWarnings(t)
	return nil
}

// write runs fn in a read-write transaction, or a read-only one for a
// dry run, which stores nothing.
func (s *Store) write(ctx context.Context, dryRun bool, fn func(t *txn) error) error {
	if dryRun {
		return s.view(ctx, fn)
	}
	return s.update(ctx, fn)
}

// Batch runs fn with a cluster.Interface whose calls all join one
// read-write transaction, committed once when fn returns nil and rolled
// back when it returns an error (or when a call inside failed for a reason
// other than a *cluster.StatusError). Watchers see the batch's events after
// the commit. fn must make its calls through c, not through the Store
// (which would wait for the batch to end), and from one goroutine at a
// time; c is not valid after fn returns.
func (s *Store) Batch(ctx context.Context, fn func(c cluster.Interface) error) error {
	return s.update(ctx, func(t *txn) error {
		b := &batch{s: s, t: t}
		defer b.end()
		return fn(b)
	})
}

// Get returns the object, or a NotFound *cluster.StatusError.
func (s *Store) Get(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	var out cluster.Object
	err := s.view(ctx, func(t *txn) (err error) {
		out, err = t.get(gvk, namespace, name)
		return err
	})
	return out, err
}

// List returns the objects of a kind matching the options, ordered by
// namespace and name.
func (s *Store) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	var out *cluster.List
	err := s.view(ctx, func(t *txn) (err error) {
		out, err = t.list(gvk, cluster.CollectList(opts))
		return err
	})
	return out, err
}

// Watch reports the changes made through this Store to objects of a kind.
func (s *Store) Watch(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (cluster.Watcher, error) {
	return s.watch(ctx, gvk, cluster.CollectList(opts))
}

// Create stores a new object.
func (s *Store) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	o := cluster.CollectCreate(opts)
	var out cluster.Object
	err := s.write(ctx, o.DryRun, func(t *txn) (err error) {
		out, err = t.create(obj, o)
		return err
	})
	return out, err
}

// Update replaces an object; status is kept for kinds with a status
// subresource.
func (s *Store) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	o := cluster.CollectUpdate(opts)
	var out cluster.Object
	err := s.write(ctx, o.DryRun, func(t *txn) (err error) {
		out, err = t.update(obj, false, o)
		return err
	})
	return out, err
}

// UpdateStatus replaces the status of an object.
func (s *Store) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	o := cluster.CollectUpdate(opts)
	var out cluster.Object
	err := s.write(ctx, o.DryRun, func(t *txn) (err error) {
		out, err = t.update(obj, true, o)
		return err
	})
	return out, err
}

// Patch changes an object with a patch.
func (s *Store) Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt cluster.PatchType, patch []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	o := cluster.CollectPatch(opts)
	var out cluster.Object
	err := s.write(ctx, o.DryRun, func(t *txn) (err error) {
		out, err = t.patch(gvk, namespace, name, pt, patch, o)
		return err
	})
	return out, err
}

// Delete deletes an object and, by its propagation policy, its dependents.
func (s *Store) Delete(ctx context.Context, gvk schema.GVK, namespace, name string, opts ...cluster.DeleteOption) error {
	o := cluster.CollectDelete(opts)
	return s.write(ctx, o.DryRun, func(t *txn) error {
		return t.delete(gvk, namespace, name, o)
	})
}

// batch is the cluster.Interface of a Batch: every call works in the
// batch's transaction.
type batch struct {
	s     *Store
	t     *txn
	mu    sync.Mutex
	ended bool
}

var _ cluster.Interface = (*batch)(nil)

func (b *batch) end() {
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
}

// do runs one call of the batch.
func (b *batch) do(ctx context.Context, fn func(t *txn) error) (err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damage(b.s.db.Path(), r)
			b.t.failed = err
		}
	}()
	if b.ended {
		return errors.New("local: batch call after the batch ended")
	}
	if b.t.failed != nil {
		return fmt.Errorf("local: batch failed earlier: %w", b.t.failed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err = fn(b.t)
	var se *cluster.StatusError
	if err != nil && !errors.As(err, &se) {
		// The transaction may hold part of the call's writes: the batch
		// must not commit.
		b.t.failed = err
	}
	return err
}

func (b *batch) Mapper() cluster.Mapper {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.t.api.mapper
}

func (b *batch) Get(ctx context.Context, gvk schema.GVK, namespace, name string) (cluster.Object, error) {
	var out cluster.Object
	err := b.do(ctx, func(t *txn) (err error) {
		out, err = t.get(gvk, namespace, name)
		return err
	})
	return out, err
}

func (b *batch) List(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (*cluster.List, error) {
	var out *cluster.List
	err := b.do(ctx, func(t *txn) (err error) {
		out, err = t.list(gvk, cluster.CollectList(opts))
		return err
	})
	return out, err
}

// Watch is not part of the transaction: it watches the Store, from now.
func (b *batch) Watch(ctx context.Context, gvk schema.GVK, opts ...cluster.ListOption) (cluster.Watcher, error) {
	return b.s.Watch(ctx, gvk, opts...)
}

func (b *batch) Create(ctx context.Context, obj cluster.Object, opts ...cluster.CreateOption) (cluster.Object, error) {
	var out cluster.Object
	err := b.do(ctx, func(t *txn) (err error) {
		out, err = t.create(obj, cluster.CollectCreate(opts))
		return err
	})
	return out, err
}

func (b *batch) Update(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	var out cluster.Object
	err := b.do(ctx, func(t *txn) (err error) {
		out, err = t.update(obj, false, cluster.CollectUpdate(opts))
		return err
	})
	return out, err
}

func (b *batch) UpdateStatus(ctx context.Context, obj cluster.Object, opts ...cluster.UpdateOption) (cluster.Object, error) {
	var out cluster.Object
	err := b.do(ctx, func(t *txn) (err error) {
		out, err = t.update(obj, true, cluster.CollectUpdate(opts))
		return err
	})
	return out, err
}

func (b *batch) Patch(ctx context.Context, gvk schema.GVK, namespace, name string, pt cluster.PatchType, patch []byte, opts ...cluster.PatchOption) (cluster.Object, error) {
	var out cluster.Object
	err := b.do(ctx, func(t *txn) (err error) {
		out, err = t.patch(gvk, namespace, name, pt, patch, cluster.CollectPatch(opts))
		return err
	})
	return out, err
}

func (b *batch) Delete(ctx context.Context, gvk schema.GVK, namespace, name string, opts ...cluster.DeleteOption) error {
	return b.do(ctx, func(t *txn) error {
		return t.delete(gvk, namespace, name, cluster.CollectDelete(opts))
	})
}

// BatchRevision returns the revision the batch that c belongs to has
// reached (the resourceVersion of its last write, or the store's revision
// when it began), and false when c is not the cluster.Interface of a Batch
// or the batch has ended. Every object a write creates, changes or removes
// moves the revision by one, so a caller can tell from it how many objects
// its own calls changed.
func BatchRevision(c cluster.Interface) (uint64, bool) {
	b, ok := c.(*batch)
	if !ok {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return 0, false
	}
	return b.t.rev, true
}

// Change is an object that a write changed, with the revision the write
// gave the store; Deleted: the write deleted it.
type Change struct {
	Group, Kind, Namespace, Name string
	Revision                     uint64
	Deleted                      bool
}

// BatchChanges returns the objects the writes of a batch (the Cluster of a
// Txn) changed after revision since, in the order of the writes (a
// cascading deletion is several); ok is false when c is not a batch, or
// its transaction does not hold every write after since (it began later).
func BatchChanges(c cluster.Interface, since uint64) ([]Change, bool) {
	b, ok := c.(*batch)
	if !ok {
		return nil, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return nil, false
	}
	if since >= b.t.rev {
		return nil, since == b.t.rev
	}
	evs := b.t.events
	i := len(evs)
	for i > 0 && evs[i-1].rev > since {
		i--
	}
	if i == len(evs) || evs[i].rev != since+1 {
		return nil, false
	}
	out := make([]Change, 0, len(evs)-i)
	for _, ev := range evs[i:] {
		out = append(out, Change{Group: ev.key.gk.Group, Kind: ev.key.gk.Kind, Namespace: ev.key.namespace, Name: ev.key.name, Revision: ev.rev, Deleted: ev.typ == cluster.Deleted})
	}
	return out, true
}

// fixedClock is a Clock stopped at one time.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// persistedNow reads the time a PersistentClock saved in the state (its
// value's "now", as package clock writes it); false when there is none.
func persistedNow(tx *bolt.Tx, c Clock) (time.Time, bool) {
	pc, ok := c.(PersistentClock)
	if !ok {
		return time.Time{}, false
	}
	key, _, err := pc.Persisted()
	if err != nil || key == "" {
		return time.Time{}, false
	}
	v := tx.Bucket(bucketMeta).Get([]byte(key))
	if v == nil {
		return time.Time{}, false
	}
	var saved struct {
		Now time.Time `json:"now"`
	}
	if json.Unmarshal(v, &saved) != nil || saved.Now.IsZero() {
		return time.Time{}, false
	}
	return saved.Now, true
}
