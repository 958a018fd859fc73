package kubelet

import (
	"errors"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// What a container's command does, as far as a simulation can tell without
// running it: `sleep 30`, `exit 3`, `true`, `false`, `sh -c "echo hi;
// sleep 5; exit 2"` end, at a known time, with a known code; `sleep
// infinity`, a loop, `tail -f` or a program the simulation does not know
// (a server: `nginx -g 'daemon off;'`, `python app.py`) runs until it is
// stopped. Durations saturate: a sleep longer than maxSleep runs for ever,
// as it does on a real node.

// maxSleep is the longest sleep the simulation distinguishes from for
// ever: a century.
const maxSleep = 100 * 365 * 24 * time.Hour

// process is the fate of a container's main process.
type process struct {
	// exits reports a process that ends by itself, after `after` with
	// `code`; otherwise it runs until stopped.
	exits bool
	after time.Duration
	code  int64
	// server reports a process that runs because the simulation cannot
	// tell when it ends (a program it does not know, a server most
	// likely, or a loop), rather than because the command says so (sleep
	// infinity): an init container then runs for the profile's initRun.
	server bool
}

// shells are the programs whose -c script is interpreted.
var shells = map[string]bool{"sh": true, "bash": true, "ash": true, "dash": true, "zsh": true, "ksh": true}

// wrappers are init programs that run the rest of the command line.
var wrappers = map[string]bool{"tini": true, "dumb-init": true, "busybox": true, "nice": true, "nohup": true}

// instant are commands that end at once with status 0 when they are not
// the last thing a script does (and also when they are).
var instant = map[string]bool{
	"echo": true, "printf": true, "cat": true, "ls": true, "touch": true, "rm": true, "mkdir": true,
	"cp": true, "mv": true, "date": true, "env": true, "printenv": true, "hostname": true, "id": true,
	"whoami": true, "pwd": true, "cd": true, "export": true, "set": true, "unset": true, "trap": true,
	"test": true, "[": true, "chmod": true, "chown": true, "ln": true, "uname": true, "df": true,
	"du": true, "ps": true, "sync": true, "tee": true, "grep": true, "sed": true, "awk": true,
	"head": true, "wc": true, "sort": true, "true": true, ":": true, "umask": true,
	"sysctl": true, "mount": true, "cut": true, "tr": true, "basename": true, "dirname": true,
	"envsubst": true, "nslookup": true, "wget": true, "curl": true, "ping": true, "find": true,
	"stat": true, "readlink": true, "realpath": true, "seq": true, "uptime": true, "free": true,
	"ulimit": true, "source": true, ".": true, "shift": true, "local": true, "read": true,
}

// interpretCommand reads a container's command and args; ok is false when
// there is nothing to read (neither is given).
func interpretCommand(command []string) (p process, ok bool) {
	if len(command) == 0 {
		return process{}, false
	}
	for len(command) > 1 && (wrappers[path.Base(command[0])] || command[0] == "--") {
		command = command[1:]
	}
	prog := path.Base(command[0])
	if shells[prog] {
		script, hasScript, errexit := shellScript(command[1:])
		if !hasScript {
			if len(command) == 1 {
				// A shell without a terminal reads nothing and ends.
				return process{exits: true}, true
			}
			// A script file the simulation cannot read: runs.
			return process{server: true}, true
		}
		return runScript(script, errexit), true
	}
	// One program with its arguments, no shell: quote the words so that
	// the script reader sees them as they are.
	words := make([]string, len(command))
	for i, w := range command {
		words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return runScript(strings.Join(words, " "), false), true
}

// shellScript finds the script of `sh [-flags] -c SCRIPT [args]`, and
// whether -e (exit on the first failure) is set.
func shellScript(args []string) (script string, ok, errexit bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			return "", false, errexit
		}
		if strings.HasPrefix(a, "-o") || strings.HasPrefix(a, "+o") {
			if i+1 < len(args) && args[i+1] == "errexit" {
				errexit = true
			}
			i++
			continue
		}
		if strings.Contains(a, "e") {
			errexit = true
		}
		if strings.Contains(a, "c") {
			if i+1 < len(args) {
				return args[i+1], true, errexit
			}
			return "", false, errexit
		}
	}
	return "", false, errexit
}

// A token of a script: a word or an operator.
type token struct {
	word string
	op   string // ";", "&&", "||", "&", "|", "\n", "(", ")"
}

// tokenize splits a script into words and operators, honouring quotes
// and backslashes; comments are dropped.
func tokenize(script string) []token {
	var out []token
	var b strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			out = append(out, token{word: b.String()})
			b.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(script); i++ {
		ch := script[i]
		switch {
		case ch == '\'':
			inWord = true
			j := strings.IndexByte(script[i+1:], '\'')
			if j < 0 {
				b.WriteString(script[i+1:])
				i = len(script)
				break
			}
			b.WriteString(script[i+1 : i+1+j])
			i += j + 1
		case ch == '"':
			inWord = true
			for i++; i < len(script) && script[i] != '"'; i++ {
				if script[i] == '\\' && i+1 < len(script) {
					i++
				}
				b.WriteByte(script[i])
			}
		case ch == '\\':
			if i+1 < len(script) {
				i++
				if script[i] != '\n' {
					inWord = true
					b.WriteByte(script[i])
				}
			}
		case ch == '#' && !inWord:
			for i < len(script) && script[i] != '\n' {
				i++
			}
			i--
		case ch == ' ' || ch == '\t' || ch == '\r':
			flush()
		case ch == '\n' || ch == ';':
			flush()
			out = append(out, token{op: ";"})
		case ch == '&' || ch == '|':
			flush()
			if i+1 < len(script) && script[i+1] == ch {
				out = append(out, token{op: string([]byte{ch, ch})})
				i++
			} else {
				out = append(out, token{op: string(ch)})
			}
		case ch == '(' || ch == ')' || ch == '{' || ch == '}':
			if ch == '{' || ch == '}' {
				if inWord {
					b.WriteByte(ch)
					continue
				}
			}
			flush()
			out = append(out, token{op: "("})
		case ch == '>' || ch == '<':
			// A redirection: drop it and its target.
			flush()
			for i+1 < len(script) && (script[i+1] == '>' || script[i+1] == '&' || script[i+1] == '<') {
				i++
			}
			for i+1 < len(script) && (script[i+1] == ' ' || script[i+1] == '\t') {
				i++
			}
			for i+1 < len(script) && !strings.ContainsRune(" \t\n;&|()", rune(script[i+1])) {
				i++
			}
		default:
			inWord = true
			b.WriteByte(ch)
		}
	}
	flush()
	return out
}

// simple is one simple command of a script, with the operator before it.
type simple struct {
	words []string
	after string // the operator that joined it to the previous one: "", ";", "&&", "||", "|"
	bg    bool   // ended by "&"
}

// runScript interprets a script: its simple commands in order, sleeps
// adding up, until an exit, the end, or a command that does not end.
func runScript(script string, errexit bool) process {
	toks := tokenize(script)
	var cmds []simple
	cur := simple{}
	for _, t := range toks {
		switch t.op {
		case "":
			cur.words = append(cur.words, t.word)
		case "(":
			// Grouping: the commands inside run as any others.
		default:
			if len(cur.words) > 0 {
				if t.op == "&" {
					cur.bg = true
				}
				cmds = append(cmds, cur)
			}
			op := t.op
			if op == "&" {
				op = ";"
			}
			cur = simple{after: op}
		}
	}
	if len(cur.words) > 0 {
		cmds = append(cmds, cur)
	}
	var elapsed time.Duration
	status := int64(0)
	background := false // a job that never ends runs in the background
	for i, c := range cmds {
		switch c.after {
		case "&&":
			if status != 0 {
				continue
			}
		case "||":
			if status == 0 {
				continue
			}
		}
		last := i == len(cmds)-1 || (i+1 < len(cmds) && cmds[i+1].after == "|" && lastOfPipeline(cmds, i))
		words := c.words
		for len(words) > 0 && (strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "=")) {
			words = words[1:] // VAR=value before a command
		}
		if len(words) == 0 {
			status = 0
			continue
		}
		name := path.Base(words[0])
		if name == "exec" {
			words = words[1:]
			if len(words) == 0 {
				continue
			}
			name, last = path.Base(words[0]), true
		}
		if i+1 < len(cmds) && cmds[i+1].after == "|" {
			// Inside a pipeline: only its last command counts.
			continue
		}
		switch name {
		case "while", "until", "for", "select":
			// A loop: how long it runs is not for the simulation to tell.
			return process{server: true}
		case "exit":
			code := status
			if len(words) > 1 {
				n, err := strconv.ParseInt(words[1], 10, 64)
				if err != nil || n < 0 {
					code = 2
				} else {
					code = n & 255
				}
			}
			return done(elapsed, code)
		case "sleep":
			d, ok, forever := sleepArgs(words[1:])
			switch {
			case !ok:
				status = 1
			case c.bg:
				if forever || d > 0 {
					background = true
				}
				status = 0
			case forever:
				return process{}
			default:
				elapsed = addDuration(elapsed, d)
				if elapsed >= maxSleep {
					return process{}
				}
				status = 0
			}
		case "false":
			status = 1
		case "wait":
			if background {
				return process{}
			}
			status = 0
		case "tail":
			if containsFollow(words[1:]) {
				if c.bg {
					background = true
					continue
				}
				return process{}
			}
			status = 0
		case "yes", "top", "watch":
			if c.bg {
				background = true
				continue
			}
			return process{}
		default:
			if c.bg {
				background = true
				status = 0
				continue
			}
			if !instant[name] && last {
				// A program the simulation does not know, as the last
				// thing the container does: it serves until stopped.
				return process{server: true}
			}
			status = 0
		}
		if errexit && status != 0 && c.after != "||" && (i+1 >= len(cmds) || cmds[i+1].after != "||") {
			return done(elapsed, status)
		}
	}
	return done(elapsed, status)
}

func lastOfPipeline(cmds []simple, i int) bool {
	for j := i + 1; j < len(cmds); j++ {
		if cmds[j].after != "|" {
			return false
		}
	}
	return true
}

func done(after time.Duration, code int64) process {
	return process{exits: true, after: after.Truncate(time.Second), code: code}
}

func containsFollow(args []string) bool {
	for _, a := range args {
		if a == "-f" || a == "-F" || a == "--follow" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "fF")) {
			return true
		}
	}
	return false
}

// sleepArgs adds up the arguments of sleep as GNU and busybox sleep read
// them (numbers, with an optional s, m, h or d suffix; "inf" and
// "infinity"); ok is false for an argument sleep refuses (it then fails at
// once), forever for a sleep of maxSleep or more.
func sleepArgs(args []string) (d time.Duration, ok, forever bool) {
	if len(args) == 0 {
		return 0, false, false
	}
	total := 0.0
	for _, a := range args {
		unit := 1.0
		switch {
		case strings.HasSuffix(a, "s"):
			a = strings.TrimSuffix(a, "s")
		case strings.HasSuffix(a, "m"):
			a, unit = strings.TrimSuffix(a, "m"), 60
		case strings.HasSuffix(a, "h"):
			a, unit = strings.TrimSuffix(a, "h"), 3600
		case strings.HasSuffix(a, "d"):
			a, unit = strings.TrimSuffix(a, "d"), 86400
		}
		switch strings.ToLower(a) {
		case "inf", "infinity":
			return 0, true, true
		}
		n, err := strconv.ParseFloat(a, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(a, "-") {
				return 0, true, true // beyond float64: for ever
			}
			return 0, false, false
		}
		if math.IsNaN(n) || n < 0 {
			return 0, false, false
		}
		total += n * unit
	}
	if math.IsInf(total, 0) || total >= maxSleep.Seconds() {
		return 0, true, true
	}
	return time.Duration(total * float64(time.Second)), true, false
}

// addDuration is a+b, saturated at the largest Duration.
func addDuration(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
