package manifest

import (
	"context"
	"errors"
	"github.com/konverge/konverge/internal/parallel"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultMaxFileSize is the largest file Read reads when
// Options.MaxFileSize is 0: 32 MiB, several times the largest manifests in
// common use (bundles of CRDs weigh a few MiB) and 20 times the largest
// object etcd accepts by default (1.5 MiB).
const DefaultMaxFileSize = 32 << 20

// extensions are the file extensions Read picks in directories, as kubectl
// does (and as it does, case-sensitively). A file named explicitly is read whatever its extension.
var extensions = []string{".json", ".yaml", ".yml"}

// Options configure Read. The zero value reads directories without their
// subdirectories, standard input from os.Stdin, and files up to
// DefaultMaxFileSize.
type Options struct {
	// Recursive makes Read descend into the subdirectories of directories
	// (kubectl's -R).
	Recursive bool
	// Stdin is read for the path "-"; nil means os.Stdin.
	Stdin io.Reader
	// MaxFileSize is the largest file, or standard input, in bytes: a larger
	// one is an error (a *SizeError), found without reading it for regular
	// files, and after reading MaxFileSize+1 bytes for streams. 0 means
	// DefaultMaxFileSize; a negative value means no limit.
	MaxFileSize int64
	// Cache, when not nil, remembers the documents of this Read, and
	// gives those of the last Read with the same Cache whose bytes did not
	// change without parsing them again (see Cache).
	Cache *Cache
}

// input is one file or standard input.
type input struct {
	name  string
	stdin bool
	err   error // found while expanding paths, or reading
	units []unit
}

// Read reads the Kubernetes objects in paths, as kubectl apply -f does.
//
// Each path is a file, a directory or "-" for standard input. Files are
// read whatever their name; in a directory, the files ending in .json,
// .yaml or .yml, in the order of their names, and with Recursive those of
// its subdirectories, where they sort (symbolic links to directories are
// not followed). URLs are not supported.
//
// Read returns the objects in the order of paths, files and documents, and
// every problem it found in all of them as Errors; paths that hold no file
// at all are an error too, as for kubectl. The objects it returns
// with an error are those without problems: callers that must act on all
// objects or none, as apply does, check the error first. It returns only
// ctx.Err() when ctx is done.
func Read(ctx context.Context, paths []string, opts Options) ([]Object, error) {
	r := reader{opts: opts}
	if r.opts.MaxFileSize == 0 {
		r.opts.MaxFileSize = DefaultMaxFileSize
	}
	if r.opts.Stdin == nil {
		r.opts.Stdin = os.Stdin
	}
	r.expand(paths)
	if len(r.inputs) == 0 && len(paths) > 0 {
		return nil, Errors{{Source: Source{File: strings.Join(paths, ", ")}, Err: errors.New("no files ending in .json, .yaml or .yml")}}
	}
	if err := parallel.Each(ctx, len(r.inputs), func(i int) { r.read(r.inputs[i]) }); err != nil {
		return nil, err
	}
	return runCached(ctx, r.inputs, r.opts.Cache)
}

// Parse reads the Kubernetes objects in data, the content of a file named
// file, as Read reads a file. Its errors name file in their Source.
func Parse(ctx context.Context, file string, data []byte) ([]Object, error) {
	in := &input{name: file, units: split(data)}
	return run(ctx, []*input{in})
}

// run parses the units of the inputs in parallel and collects the results
// in order.
func run(ctx context.Context, inputs []*input) ([]Object, error) {
	return runCached(ctx, inputs, nil)
}

// runCached is run that takes the documents c remembers (c may be nil).
func runCached(ctx context.Context, inputs []*input, c *Cache) ([]Object, error) {
	var units []*unit
	for _, in := range inputs {
		for i := range in.units {
			units = append(units, &in.units[i])
		}
	}
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.next = make(map[cacheKey][]docResult, len(units))
	}
	if err := parallel.Each(ctx, len(units), func(i int) { c.parse(units[i]) }); err != nil {
		return nil, err
	}
	if c != nil {
		c.last, c.next = c.next, nil
	}
	var objs []Object
	var errs Errors
	for _, in := range inputs {
		if in.err != nil {
			errs = append(errs, &Error{Source: Source{File: in.name}, Err: in.err})
			continue
		}
		doc := 0
		for _, u := range in.units {
			for _, d := range u.docs {
				doc++
				for _, o := range d.objs {
					o.Source.File, o.Source.Doc = in.name, doc
					objs = append(objs, o)
				}
				for _, e := range d.errs {
					e.Source.File, e.Source.Doc = in.name, doc
					errs = append(errs, e)
				}
			}
		}
	}
	if len(errs) > 0 {
		return objs, errs
	}
	return objs, nil
}

type reader struct {
	opts      Options
	inputs    []*input
	stdinUsed bool
}

func (r *reader) add(in *input) { r.inputs = append(r.inputs, in) }

// expand turns paths into inputs, walking directories.
func (r *reader) expand(paths []string) {
	for _, p := range paths {
		switch {
		case p == "-":
			if r.stdinUsed {
				r.add(&input{name: p, err: errors.New("standard input given more than once")})
				continue
			}
			r.stdinUsed = true
			r.add(&input{name: p, stdin: true})
		case p == "":
			r.add(&input{name: p, err: errors.New("empty path")})
		case strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://"):
			r.add(&input{name: p, err: errors.New("reading URLs is not supported; download the file and give its path")})
		default:
			fi, err := os.Stat(p)
			if err != nil {
				r.add(&input{name: p, err: pathError(err)})
			} else if fi.IsDir() {
				r.walk(p)
			} else {
				r.add(&input{name: p})
			}
		}
	}
}

// walk adds the manifest files of dir, in the order of their names, and
// with Recursive those of its subdirectories where they sort, as
// filepath.Walk visits them for kubectl.
func (r *reader) walk(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		r.add(&input{name: dir, err: pathError(err)})
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if r.opts.Recursive {
				r.walk(p)
			}
			continue
		}
		if !hasExtension(e.Name()) {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				continue
			}
		}
		r.add(&input{name: p})
	}
}

func hasExtension(name string) bool {
	ext := filepath.Ext(name)
	for _, e := range extensions {
		if ext == e {
			return true
		}
	}
	return false
}

// pathError is the cause of an error about a path, without the path (the
// Error names it).
func pathError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotExist
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// read reads the input and splits it into units.
func (r *reader) read(in *input) {
	if in.err != nil {
		return
	}
	var data []byte
	var err error
	if in.stdin {
		data, err = readLimited(r.opts.Stdin, -1, r.opts.MaxFileSize)
	} else {
		data, err = r.readFile(in.name)
	}
	if err != nil {
		in.err = err
		return
	}
	in.units = split(data)
}

func (r *reader) readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, pathError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, pathError(err)
	}
	size := int64(-1)
	if fi.Mode().IsRegular() {
		size = fi.Size()
		if limit := r.opts.MaxFileSize; limit >= 0 && size > limit {
			return nil, &SizeError{Size: size, Limit: limit}
		}
	}
	return readLimited(f, size, r.opts.MaxFileSize)
}

// readLimited reads rd to its end, failing once it holds more than limit
// bytes (no limit when limit < 0). size is its expected size, -1 if unknown.
func readLimited(rd io.Reader, size, limit int64) ([]byte, error) {
	if limit >= 0 {
		rd = io.LimitReader(rd, limit+1)
	}
	buf := make([]byte, 0, max(size+1, 512))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, pathError(err)
		}
	}
	if limit >= 0 && int64(len(buf)) > limit {
		return nil, &SizeError{Size: -1, Limit: limit}
	}
	return buf, nil
}
