package manifest

import (
	"encoding/base64"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file resolves YAML scalars exactly as kubectl does. kubectl decodes
// YAML with sigs.k8s.io/yaml, which unmarshals with go-yaml v2 (YAML 1.1
// rules: yes/no/on/off/y/n are booleans, 0777 is octal, timestamps stay
// strings), marshals the result to JSON and decodes that JSON again with
// integers as int64. resolveScalar reproduces the three steps in one.

// Short forms of the YAML tags that go-yaml v2 resolves.
const (
	tagStr       = "!!str"
	tagBool      = "!!bool"
	tagInt       = "!!int"
	tagFloat     = "!!float"
	tagNull      = "!!null"
	tagTimestamp = "!!timestamp"
	tagBinary    = "!!binary"
	tagMerge     = "!!merge"
)

// errNotJSON is a float that JSON cannot represent: kubectl fails with
// "json: unsupported value: +Inf".
var errNotJSON = errors.New("infinity and NaN cannot be represented in JSON")

// hint classifies a plain scalar by its first byte, as go-yaml v2 does.
var hint = func() (t [256]byte) {
	t['+'], t['-'] = 'S', 'S'
	for c := '0'; c <= '9'; c++ {
		t[c] = 'D'
	}
	for _, c := range "yYnNtTfFoO~" {
		t[c] = 'M'
	}
	t['.'] = '.'
	return t
}()

type resolved struct {
	tag string
	v   any
}

// words are the plain scalars go-yaml v2 resolves by lookup.
var words = func() map[string]resolved {
	m := map[string]resolved{}
	add := func(tag string, v any, ss ...string) {
		for _, s := range ss {
			m[s] = resolved{tag, v}
		}
	}
	add(tagBool, true, "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")
	add(tagBool, false, "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
	add(tagNull, nil, "", "~", "null", "Null", "NULL")
	add(tagFloat, math.NaN(), ".nan", ".NaN", ".NAN")
	add(tagFloat, math.Inf(1), ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")
	add(tagFloat, math.Inf(-1), "-.inf", "-.Inf", "-.INF")
	add(tagMerge, "<<", "<<")
	return m
}()

var yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// resolveTagged returns the tag and Go value go-yaml v2 gives a scalar with
// the explicit tag tag ("" for a plain scalar without one): string, bool,
// int64, uint64, float64 or nil. A timestamp is returned as its text, as
// go-yaml v2 does when decoding into interface{}.
func resolveTagged(tag, in string) (string, any, error) {
	switch tag {
	case "", tagStr, tagBool, tagInt, tagFloat, tagNull, tagTimestamp:
	case tagBinary:
		b, err := base64.StdEncoding.DecodeString(in)
		if err != nil {
			return "", nil, errors.New("!!binary value is not valid base64")
		}
		return tagBinary, jsonString(b), nil
	default:
		// Unknown tags (!foo, !!map on a scalar) are ignored: the value
		// stays the string as written.
		return tag, in, nil
	}
	rtag, v := resolvePlain(tag, in)
	switch {
	case tag == "" || tag == rtag || tag == tagStr:
	case tag == tagFloat && rtag == tagInt:
		n, ok := v.(int64)
		if !ok { // go-yaml v2 does not convert integers above MaxInt64
			return "", nil, errors.New("value does not match its tag " + tag)
		}
		v = float64(n)
	default:
		return "", nil, errors.New("value does not match its tag " + tag)
	}
	return tag, v, nil
}

// resolvePlain is go-yaml v2's resolve for a resolvable tag.
func resolvePlain(tag, in string) (string, any) {
	h := byte('N')
	if in != "" {
		h = hint[in[0]]
	}
	if h == 0 || tag == tagStr {
		return tagStr, in
	}
	if r, ok := words[in]; ok {
		return r.tag, r.v
	}
	switch h {
	case '.':
		if f, err := strconv.ParseFloat(in, 64); err == nil {
			return tagFloat, f
		}
	case 'D', 'S':
		if !numberChars(in) && !strings.ContainsRune(in, ':') {
			// Neither a number nor a timestamp: 100m, 128Mi, 1.27-alpine.
			return tagStr, in
		}
		if tag == "" || tag == tagTimestamp {
			if isTimestamp(in) {
				return tagTimestamp, in
			}
		}
		plain := strings.ReplaceAll(in, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return tagInt, i
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return tagInt, u
		}
		if yamlStyleFloat.MatchString(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return tagFloat, f
			}
		}
		if rest, ok := strings.CutPrefix(plain, "0b"); ok {
			if i, err := strconv.ParseInt(rest, 2, 64); err == nil {
				return tagInt, i
			}
			if u, err := strconv.ParseUint(rest, 2, 64); err == nil {
				return tagInt, u
			}
		} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if i, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return tagInt, i
			}
		}
	}
	return tagStr, in
}

// numberChars reports whether s has only characters that numbers in any of
// go-yaml v2's forms can have (digits, signs, base prefixes, hexadecimal
// digits, underscores, points, exponents), and so is worth parsing. Dates
// (2001-12-14) pass too.
func numberChars(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F',
			c == 'x', c == 'X', c == 'o', c == 'O', c == '_', c == '.', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

var timestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isTimestamp reports whether go-yaml v2 reads a plain scalar as a
// timestamp: a year of exactly four digits, a dash, and the rest in one of
// timestampFormats.
func isTimestamp(s string) bool {
	year := len(s) - len(strings.TrimLeft(s, "0123456789"))
	if year != 4 || !strings.HasPrefix(s[year:], "-") {
		return false
	}
	return slices.ContainsFunc(timestampFormats, func(layout string) bool {
		_, err := time.Parse(layout, s)
		return err == nil
	})
}

// jsonValue converts a resolved scalar the way a JSON round trip through
// encoding/json and k8s.io/apimachinery/pkg/util/json does: integers that
// fit become int64, other integers float64; a float64 whose JSON form has no
// fraction or exponent (1.0, 1e3) becomes int64.
func jsonValue(v any) (any, error) {
	switch n := v.(type) {
	case uint64:
		return float64(n), nil
	case float64:
		if math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, errNotJSON
		}
		// encoding/json prints an integral float below 1e21 as the
		// shortest digits that read back as it (7.000000000000001e18 as
		// 7000000000000001000, not ...1024), which decode as an int64
		// when they fit.
		if n == math.Trunc(n) && math.Abs(n) < 1e21 {
			var buf [32]byte
			if i, err := strconv.ParseInt(string(strconv.AppendFloat(buf[:0], n, 'f', -1, 64)), 10, 64); err == nil {
				return i, nil
			}
		}
		return n, nil
	}
	return v, nil
}

// keyString is the JSON object key sigs.k8s.io/yaml makes of a resolved
// mapping key.
func keyString(v any) (string, bool) {
	switch k := v.(type) {
	case string:
		return k, true
	case int64:
		return strconv.FormatInt(k, 10), true
	case float64:
		// YAML's spellings for the values without digits; others as
		// float32 'g' text.
		switch {
		case math.IsNaN(k):
			return ".nan", true
		case math.IsInf(k, 1):
			return ".inf", true
		case math.IsInf(k, -1):
			return "-.inf", true
		}
		return strconv.FormatFloat(k, 'g', -1, 32), true
	case bool:
		return strconv.FormatBool(k), true
	}
	return "", false // null and integers above MaxInt64 (uint64)
}

// jsonString is string(b) with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json writes it.
func jsonString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		sb.WriteRune(r) // RuneError for an invalid byte
		b = b[size:]
	}
	return sb.String()
}
