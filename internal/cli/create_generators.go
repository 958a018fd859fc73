package cli

import (
	"fmt"
	"sort"
	"strings"
)

// mapStringString is a flag of "key=value" pairs separated by commas,
// as kubectl's --aggregation-rule.
type mapStringString struct {
	m           *map[string]string
	initialized bool
}

func newMapStringString(m *map[string]string) *mapStringString { return &mapStringString{m: m} }

func (f *mapStringString) String() string {
	if f == nil || f.m == nil {
		return ""
	}
	var pairs []string
	for k, v := range *f.m {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

func (f *mapStringString) Set(value string) error {
	if !f.initialized || *f.m == nil {
		*f.m = map[string]string{}
		f.initialized = true
	}
	for _, s := range strings.Split(value, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("malformed pair, expect string=string")
		}
		(*f.m)[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

func (f *mapStringString) Type() string { return "mapStringString" }
