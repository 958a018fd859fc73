package validate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseCron checks a CronJob schedule as github.com/robfig/cron/v3's
// ParseStandard does (five fields or a descriptor, optionally after TZ= or
// CRON_TZ=), with its error messages.
func parseCron(spec string) error {
	if spec == "" {
		return fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		i := strings.Index(spec, " ")
		eq := strings.Index(spec, "=")
		if i < 0 {
			return fmt.Errorf("invalid schedule format: runtime error: slice bounds out of range [%d:%d]", eq+1, i)
		}
		if _, err := time.LoadLocation(spec[eq+1 : i]); err != nil {
			return fmt.Errorf("provided bad location %s: %v", spec[eq+1:i], err)
		}
		spec = strings.TrimSpace(spec[i:])
	}
	if strings.HasPrefix(spec, "@") {
		switch spec {
		case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
			return nil
		}
		if d, ok := strings.CutPrefix(spec, "@every "); ok {
			if _, err := time.ParseDuration(d); err != nil {
				return fmt.Errorf("failed to parse duration %s: %s", spec, err)
			}
			return nil
		}
		return fmt.Errorf("unrecognized descriptor: %s", spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	bounds := []cronBounds{
		{0, 59, nil},
		{0, 23, nil},
		{1, 31, nil},
		{1, 12, map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}},
		{0, 6, map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}},
	}
	for i, f := range fields {
		for _, expr := range strings.FieldsFunc(f, func(r rune) bool { return r == ',' }) {
			if err := cronRange(expr, bounds[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

type cronBounds struct {
	min, max int
	names    map[string]int
}

func cronRange(expr string, r cronBounds) error {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	single := len(lowAndHigh) == 1
	var start, end, step int
	var err error
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		start, end = r.min, r.max
	} else {
		if start, err = cronIntOrName(lowAndHigh[0], r.names); err != nil {
			return err
		}
		switch len(lowAndHigh) {
		case 1:
			end = start
		case 2:
			if end, err = cronIntOrName(lowAndHigh[1], r.names); err != nil {
				return err
			}
		default:
			return fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	switch len(rangeAndStep) {
	case 1:
		step = 1
	case 2:
		if step, err = cronInt(rangeAndStep[1]); err != nil {
			return err
		}
		if single {
			end = r.max
		}
	default:
		return fmt.Errorf("too many slashes: %s", expr)
	}
	switch {
	case start < r.min:
		return fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, r.min, expr)
	case end > r.max:
		return fmt.Errorf("end of range (%d) above maximum (%d): %s", end, r.max, expr)
	case start > end:
		return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	case step == 0:
		return fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	return nil
}

func cronIntOrName(expr string, names map[string]int) (int, error) {
	if n, ok := names[strings.ToLower(expr)]; ok {
		return n, nil
	}
	return cronInt(expr)
}

func cronInt(expr string) (int, error) {
	n, err := strconv.Atoi(expr)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", expr, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, expr)
	}
	return n, nil
}
