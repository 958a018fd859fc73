// Package kustomize builds kustomizations with the kustomize library
// (sigs.k8s.io/kustomize/api), as kubectl's -k flag and kubectl kustomize
// do: plugins and Helm off, files loaded from within the kustomization's
// root only, resources in kustomize's legacy order (namespaces and CRDs
// first).
//
// It is not a re-implementation: the build is the library's. It only
// routes the library's deprecation warnings, which the library writes to
// the process's standard error, to a writer of the caller's choice.
package kustomize

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Options tune a build. The zero value builds as kubectl -k does.
type Options struct {
	// LoadFilesOutsideRoot lets the kustomization read files outside its
	// directory (kustomize's --load-restrictor LoadRestrictionsNone).
	LoadFilesOutsideRoot bool
}

// Build runs the kustomization in dir and returns its resources as a YAML
// stream ("---" between documents), as kubectl kustomize prints them. The
// library's warnings (deprecated fields) go to warn (nil: discarded).
func Build(dir string, warn io.Writer) ([]byte, error) {
	return BuildWith(dir, warn, Options{})
}

// BuildWith is Build with options.
func BuildWith(dir string, warn io.Writer, o Options) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	if o.LoadFilesOutsideRoot {
		opts.LoadRestrictions = types.LoadRestrictionsNone
	}
	k := krusty.MakeKustomizer(opts)
	var out []byte
	err := captureStderr(warn, func() error {
		m, err := k.Run(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			return err
		}
		out, err = m.AsYaml()
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

var stderrMu sync.Mutex

// captureStderr runs fn with the process's standard error sent to w: the
// kustomize library prints its warnings there.
func captureStderr(w io.Writer, fn func() error) error {
	stderrMu.Lock()
	defer stderrMu.Unlock()
	r, pw, err := os.Pipe()
	if err != nil {
		return fn()
	}
	saved := os.Stderr
	os.Stderr = pw
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(&buf, r)
		close(done)
	}()
	ferr := fn()
	os.Stderr = saved
	_ = pw.Close()
	<-done
	_ = r.Close()
	if w != nil {
		_, _ = w.Write(buf.Bytes())
	}
	if ferr != nil {
		return fmt.Errorf("%w", ferr)
	}
	return nil
}
