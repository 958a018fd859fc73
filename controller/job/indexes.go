package job

import (
	"sort"
	"strconv"
	"strings"

	"github.com/konverge/konverge/controller/internal/kobj"
)

// Completion indexes of Indexed Jobs, as upstream's indexed_job_utils.

const (
	// CompletionIndexAnnotation is the annotation (and label) of an
	// Indexed Job's pod that holds its index.
	CompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index"
	// IndexFailureCountAnnotation counts the failures of an index
	// (backoffLimitPerIndex).
	IndexFailureCountAnnotation = "batch.kubernetes.io/job-index-failure-count"
	// IndexIgnoredFailureCountAnnotation counts the failures of an
	// index a pod failure policy ignored.
	IndexIgnoredFailureCountAnnotation = "batch.kubernetes.io/job-index-ignored-failure-count"
	completionIndexEnvName             = "JOB_COMPLETION_INDEX"
	unknownIndex                       = -1
)

type interval struct{ first, last int }

// intervals are ordered, disjoint, non-adjacent intervals of indexes.
type intervals []interval

func (oi intervals) withOrdered(idx []int) intervals {
	n := make(intervals, len(idx))
	for i, x := range idx {
		n[i] = interval{x, x}
	}
	return oi.merge(n)
}

func (oi intervals) merge(other intervals) intervals {
	var out intervals
	add := func(iv interval) {
		if len(out) == 0 || iv.first > out[len(out)-1].last+1 {
			out = append(out, iv)
		} else if out[len(out)-1].last < iv.last {
			out[len(out)-1].last = iv.last
		}
	}
	i, j := 0, 0
	for i < len(oi) && j < len(other) {
		if oi[i].first < other[j].first {
			add(oi[i])
			i++
		} else {
			add(other[j])
			j++
		}
	}
	for ; i < len(oi); i++ {
		add(oi[i])
	}
	for ; j < len(other); j++ {
		add(other[j])
	}
	return out
}

func (oi intervals) total() int {
	n := 0
	for _, iv := range oi {
		n += iv.last - iv.first + 1
	}
	return n
}

func (oi intervals) String() string {
	var b strings.Builder
	for _, v := range oi {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v.first))
		if v.last > v.first {
			if v.last == v.first+1 {
				b.WriteByte(',')
			} else {
				b.WriteByte('-')
			}
			b.WriteString(strconv.Itoa(v.last))
		}
	}
	return b.String()
}

func (oi intervals) has(ix int) bool {
	i := sort.Search(len(oi), func(i int) bool { return oi[i].last >= ix })
	return i < len(oi) && oi[i].first <= ix
}

// parseIndexes reads "1,3-5" (indexes at or above completions dropped).
func parseIndexes(s string, completions int) intervals {
	if s == "" {
		return nil
	}
	var out intervals
	for _, part := range strings.Split(s, ",") {
		lim := strings.Split(part, "-")
		first, err := strconv.Atoi(lim[0])
		if err != nil {
			continue
		}
		if first >= completions {
			break
		}
		last := first
		if len(lim) > 1 {
			if last, err = strconv.Atoi(lim[1]); err != nil {
				continue
			}
			if last >= completions {
				last = completions - 1
			}
		}
		if len(out) > 0 && out[len(out)-1].last == first-1 {
			out[len(out)-1].last = last
		} else {
			out = append(out, interval{first, last})
		}
	}
	return out
}

// completionIndex is a pod's index, or unknownIndex.
func completionIndex(pod map[string]any) int {
	v := kobj.Annotation(pod, CompletionIndexAnnotation)
	if v == "" {
		return unknownIndex
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return unknownIndex
	}
	return i
}

func annotationInt32(pod map[string]any, key string) int64 {
	v := kobj.Annotation(pod, key)
	if v == "" {
		return 0
	}
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil || i < 0 || i > 1<<31-1 {
		return 0
	}
	return i
}

func indexesOf(pods []map[string]any) map[int]bool {
	out := map[int]bool{}
	for _, p := range pods {
		if ix := completionIndex(p); ix != unknownIndex {
			out[ix] = true
		}
	}
	return out
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// podGenerateNameWithIndex is `<job>-<index>-`, the job's name cut so that
// the name generated from it fits.
func podGenerateNameWithIndex(job string, index int) string {
	suffix := "-" + strconv.Itoa(index) + "-"
	prefix := job + suffix
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength-len(suffix)] + suffix
	}
	return prefix
}

// maxGeneratedNameLength is the longest generateName the API server
// keeps whole (63 - 5 random characters).
const maxGeneratedNameLength = 58
