package diff

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"sync"
)

// opKind is one line of an edit script.
type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

// lineOp is one line of an edit script: a line of a (delete), of b
// (insert), or of both (equal).
type lineOp struct {
	kind opKind
	a, b int // indexes in a and b (a for deletes, b for inserts)
}

// splitLines splits text after each newline; a last line without one is a
// line too.
func splitLines(text []byte) [][]byte {
	if len(text) == 0 {
		return nil
	}
	n := bytes.Count(text, []byte{'\n'})
	if text[len(text)-1] != '\n' {
		n++
	}
	return appendLines(make([][]byte, 0, n), text)
}

// appendLines appends the lines of text to dst, as splitLines splits them.
func appendLines(dst [][]byte, text []byte) [][]byte {
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			return append(dst, text)
		}
		dst = append(dst, text[:i+1])
		text = text[i+1:]
	}
	return dst
}

// editScript returns a shortest edit script from a to b: Myers' O(ND)
// algorithm in linear space (the "middle snake" bisection).
func editScript(a, b [][]byte) []lineOp {
	var s scratch
	return s.editScript(a, b)
}

// scratch is the memory one rendering reuses: both YAML documents, their
// lines, the edit script and the text, kept in a pool between entries.
type scratch struct {
	yaml  yamlWriter
	text  []byte
	a, b  [][]byte
	ops   []lineOp
	m     myers
	out   []byte
	flags []bool
}

var scratches = sync.Pool{New: func() any { return &scratch{yaml: yamlWriter{cache: map[string]string{}}} }}

// maxScratch is the largest buffer a pooled scratch keeps.
const maxScratch = 1 << 20

// release returns s to the pool, without the buffers of an unusually
// large object.
func (s *scratch) release() {
	if cap(s.text) > maxScratch || cap(s.out) > maxScratch || cap(s.a)+cap(s.b) > maxScratch/64 {
		*s = scratch{yaml: s.yaml}
	}
	s.yaml.buf = nil
	scratches.Put(s)
}

// editScript is the edit script from a to b, in s.ops. Most lines of a
// diff are equal: the common prefix and suffix are matched first, and
// Myers' algorithm runs on what is left between them only (which is what
// it does first anyway, so that the script is the same).
func (s *scratch) editScript(a, b [][]byte) []lineOp {
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	m := &s.m
	m.a, m.b = am, bm
	m.ha, m.hb = appendHashes(m.ha[:0], am), appendHashes(m.hb[:0], bm)
	if cap(s.flags) < len(am)+len(bm) {
		s.flags = make([]bool, len(am)+len(bm))
	}
	flags := s.flags[:len(am)+len(bm)]
	clear(flags)
	m.delA, m.insB = flags[:len(am)], flags[len(am):]
	m.compare(0, len(am), 0, len(bm))

	ops := s.ops[:0]
	for i := range pre {
		ops = append(ops, lineOp{kind: opEqual, a: i, b: i})
	}
	i, j := 0, 0
	for i < len(am) || j < len(bm) {
		switch {
		case i < len(am) && m.delA[i]:
			ops = append(ops, lineOp{kind: opDelete, a: pre + i, b: pre + j})
			i++
		case j < len(bm) && m.insB[j]:
			ops = append(ops, lineOp{kind: opInsert, a: pre + i, b: pre + j})
			j++
		default:
			ops = append(ops, lineOp{kind: opEqual, a: pre + i, b: pre + j})
			i++
			j++
		}
	}
	for k := range suf {
		ops = append(ops, lineOp{kind: opEqual, a: len(a) - suf + k, b: len(b) - suf + k})
	}
	s.ops = ops
	// Let the pool hold no lines of the caller's.
	m.a, m.b = nil, nil
	return ops
}

// lineSeed hashes lines, to compare most unequal lines in one step.
var lineSeed = maphash.MakeSeed()

func appendHashes(dst []uint64, lines [][]byte) []uint64 {
	for _, l := range lines {
		dst = append(dst, maphash.Bytes(lineSeed, l))
	}
	return dst
}

// myers marks the lines of a to delete and of b to insert.
type myers struct {
	a, b   [][]byte
	ha, hb []uint64 // the lines' hashes
	delA   []bool
	insB   []bool
	v1, v2 []int
}

// eq reports whether line i of a equals line j of b.
func (m *myers) eq(i, j int) bool {
	return m.ha[i] == m.hb[j] && bytes.Equal(m.a[i], m.b[j])
}

// compare marks the differences between a[aLo:aHi] and b[bLo:bHi].
func (m *myers) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && m.eq(aLo, bLo) {
		aLo++
		bLo++
	}
	for aLo < aHi && bLo < bHi && m.eq(aHi-1, bHi-1) {
		aHi--
		bHi--
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			m.insB[j] = true
		}
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			m.delA[i] = true
		}
	default:
		x, y, ok := m.bisect(aLo, aHi, bLo, bHi)
		if !ok {
			for i := aLo; i < aHi; i++ {
				m.delA[i] = true
			}
			for j := bLo; j < bHi; j++ {
				m.insB[j] = true
			}
			return
		}
		m.compare(aLo, x, bLo, y)
		m.compare(x, aHi, y, bHi)
	}
}

// bisect finds the middle snake of a[aLo:aHi] and b[bLo:bHi], searching
// from both ends at once, and returns the point where the paths meet
// (absolute indexes); ok is false when the ranges share nothing.
func (m *myers) bisect(aLo, aHi, bLo, bHi int) (x, y int, ok bool) {
	n, mm := aHi-aLo, bHi-bLo
	maxD := (n + mm + 1) / 2
	off := maxD
	size := 2*maxD + 2
	if cap(m.v1) < size {
		m.v1 = make([]int, size)
		m.v2 = make([]int, size)
	}
	v1, v2 := m.v1[:size], m.v2[:size]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - mm
	front := delta%2 != 0
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for d := 0; d < maxD; d++ {
		for k1 := -d + k1start; k1 <= d-k1end; k1 += 2 {
			k1o := off + k1
			var x1 int
			if k1 == -d || (k1 != d && v1[k1o-1] < v1[k1o+1]) {
				x1 = v1[k1o+1]
			} else {
				x1 = v1[k1o-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < mm && m.eq(aLo+x1, bLo+y1) {
				x1++
				y1++
			}
			v1[k1o] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > mm:
				k1start += 2
			case front:
				k2o := off + delta - k1
				if k2o >= 0 && k2o < size && v2[k2o] != -1 {
					if x1 >= n-v2[k2o] {
						return aLo + x1, bLo + y1, true
					}
				}
			}
		}
		for k2 := -d + k2start; k2 <= d-k2end; k2 += 2 {
			k2o := off + k2
			var x2 int
			if k2 == -d || (k2 != d && v2[k2o-1] < v2[k2o+1]) {
				x2 = v2[k2o+1]
			} else {
				x2 = v2[k2o-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < mm && m.eq(aHi-x2-1, bHi-y2-1) {
				x2++
				y2++
			}
			v2[k2o] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > mm:
				k2start += 2
			case !front:
				k1o := off + delta - k2
				if k1o >= 0 && k1o < size && v1[k1o] != -1 {
					x1 := v1[k1o]
					y1 := off + x1 - k1o
					if x1 >= n-x2 {
						return aLo + x1, bLo + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

// unified appends the hunks of a unified diff of a and b with ctx lines of
// context, as diff -u prints them (without the file headers), and reports
// whether a and b differ.
func unified(dst []byte, a, b [][]byte, ctx int, color bool) ([]byte, bool) {
	var s scratch
	return s.unified(dst, a, b, ctx, color)
}

// unified is the package's unified, with s's memory.
func (s *scratch) unified(dst []byte, a, b [][]byte, ctx int, color bool) ([]byte, bool) {
	ops := s.editScript(a, b)
	changed := false
	for _, op := range ops {
		if op.kind != opEqual {
			changed = true
			break
		}
	}
	if !changed {
		return dst, false
	}
	for i := 0; i < len(ops); {
		// Find the next change.
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-ctx)
		// Extend the hunk while the equal runs between changes are
		// short enough to be context of both.
		end := i
		for end < len(ops) {
			for end < len(ops) && ops[end].kind != opEqual {
				end++
			}
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		dst = appendHunk(dst, ops[start:end], a, b, color)
		i = end
	}
	return dst, true
}

// appendHunk writes one hunk: its header and lines.
func appendHunk(dst []byte, ops []lineOp, a, b [][]byte, color bool) []byte {
	aStart, bStart := ops[0].a, ops[0].b
	aLen, bLen := 0, 0
	for _, op := range ops {
		switch op.kind {
		case opEqual:
			aLen++
			bLen++
		case opDelete:
			aLen++
		case opInsert:
			bLen++
		}
	}
	if color {
		dst = append(dst, colorHunk...)
	}
	dst = append(dst, "@@ -"...)
	dst = appendRange(dst, aStart, aLen)
	dst = append(dst, " +"...)
	dst = appendRange(dst, bStart, bLen)
	dst = append(dst, " @@"...)
	if color {
		dst = append(dst, colorReset...)
	}
	dst = append(dst, '\n')
	for _, op := range ops {
		var line []byte
		var c string
		switch op.kind {
		case opEqual:
			line = a[op.a]
		case opDelete:
			line, c = a[op.a], colorDelete
		case opInsert:
			line, c = b[op.b], colorInsert
		}
		if color && c != "" {
			dst = append(dst, c...)
		}
		dst = append(dst, byte(op.kind))
		if line[len(line)-1] == '\n' {
			dst = append(dst, line[:len(line)-1]...)
			if color && c != "" {
				dst = append(dst, colorReset...)
			}
			dst = append(dst, '\n')
		} else {
			dst = append(dst, line...)
			if color && c != "" {
				dst = append(dst, colorReset...)
			}
			dst = append(dst, "\n\\ No newline at end of file\n"...)
		}
	}
	return dst
}

// appendRange writes a hunk range as diff -u does: "start,len", the start
// 1-based, or the line before for an empty range, and ",1" left out.
func appendRange(dst []byte, start, n int) []byte {
	if n == 0 {
		dst = strconv.AppendInt(dst, int64(start), 10)
		return append(dst, ",0"...)
	}
	dst = strconv.AppendInt(dst, int64(start+1), 10)
	if n != 1 {
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(n), 10)
	}
	return dst
}

// ANSI colors of the unified diff, as git diff uses them.
const (
	colorHeader = "\x1b[1m"
	colorHunk   = "\x1b[36m"
	colorDelete = "\x1b[31m"
	colorInsert = "\x1b[32m"
	colorReset  = "\x1b[0m"
)
